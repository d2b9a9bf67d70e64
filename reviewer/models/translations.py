"""Translations of an update (docs/translations.md): one per language, written by a person at the
desk or drafted by the model, each checked against its source by the invariance check
(``agents.core.guard.translation``). Approval covers the set: the decision records the sha256 of
the source and of each translation, and publishing refuses a set that changed since."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class UpdateTranslation(models.Model):
    """One language's text (and title) of an update, with what the invariance check found in it.
    Belongs to the escalation whose text it translates, and to the published update once published."""

    escalation = models.ForeignKey("Escalation", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="translations")
    update = models.ForeignKey("PublishedUpdate", null=True, blank=True, on_delete=models.PROTECT,
                               related_name="translations")
    language = models.CharField(max_length=8)
    title = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    sha256 = models.CharField(max_length=64)  # of the title and the text, as approved and published
    source_sha256 = models.CharField(max_length=64)  # of the source text it was checked against
    written_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")  # None: the model drafted it
    drafted_by_model = models.CharField(max_length=100, blank=True)  # the model's name when it drafted it
    findings = models.JSONField(default=list, blank=True)  # the invariance check's findings; []: it passes
    checked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["language"]
        constraints = [models.UniqueConstraint(fields=["escalation", "language"],
                                               name="one_translation_per_escalation_and_language")]

    def __str__(self) -> str:
        return f"{self.language} translation of escalation {self.escalation_id}"

    @property
    def stopped(self) -> bool:
        return bool(self.findings)

    @property
    def author(self) -> str:
        if self.written_by_id:
            return self.written_by.get_username()
        return f"the model ({self.drafted_by_model})" if self.drafted_by_model else "the model"
