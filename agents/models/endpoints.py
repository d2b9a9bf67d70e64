"""What a model endpoint can bear, as an admin sets it, and the slots its calls hold.

An endpoint's URL and key are the operator's (``LLM_ENDPOINTS``); how many calls it takes at once
and the most tokens one answer may have there can also be set here, per endpoint name. Where the
environment sets a limit too, the lower applies (``agents/core/llm/endpoints.py``, ``LIMITS``).
"""

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from agents.core.declarations import NAME_HELP, NAME_PATTERN
from agents.core.llm.endpoints import LIMITS


def _range(name: str) -> list:
    lowest, highest, _ = LIMITS[name]
    return [MinValueValidator(lowest), MaxValueValidator(highest)]


class EndpointLimit(models.Model):
    endpoint = models.CharField(
        max_length=50,
        unique=True,
        validators=[RegexValidator(f"^{NAME_PATTERN}$", f"An endpoint name: {NAME_HELP}.")],
        help_text="One of the endpoints the operator declared (LLM_ENDPOINTS; “default” for OPENAI_BASE_URL).",
    )
    concurrency = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=_range("concurrency"),
        help_text="How many model calls the endpoint takes at once, across every worker. A call waits for a "
        "free slot within its run's time budget. Empty: no limit. A CPU llama.cpp server: 1.",
    )
    max_completion_tokens = models.PositiveIntegerField(
        null=True, blank=True, validators=_range("max_completion_tokens"),
        help_text="The most tokens one answer may have at this endpoint, whatever a policy allows: it bounds "
        "how long the server works on a call, also after the run gave up on it. Empty: the policies' own.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["endpoint"]
        verbose_name = "model endpoint limit"

    def __str__(self) -> str:
        return self.endpoint


class EndpointSlot(models.Model):
    """One of an endpoint's ``concurrency`` slots; held while ``leased_until`` is in the future."""

    endpoint = models.CharField(max_length=50)
    number = models.PositiveSmallIntegerField()
    token = models.CharField(max_length=32, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "number"], name="endpoint_slot_number")]

    def __str__(self) -> str:
        return f"{self.endpoint} #{self.number}"
