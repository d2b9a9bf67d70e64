"""Admin forms of the agents app: policies (the allowlists as checkboxes, a claim family tried on a
sample text) and incidents (their JSON fields and their facts). The rules of a row are in the models'
``clean()``, so they hold for any form that validates one; these forms add what only typed input
needs (JSON that parses into the right shape, text every page can show)."""

import json
import math
from datetime import datetime, time

from django import forms
from django.forms.fields import InvalidJSONInput
from django.utils import timezone

from agents.core.guard.claims import family_trial
from agents.core.inputs import CONTROL, ITEM_MAX_CHARS, LIST_MAX_ITEMS, context_size_problem, control_character
from agents.core.llm.endpoints import DEFAULT_ENDPOINT, EndpointError, endpoint_names
from agents.core.patterns import UnsafePattern
from agents.core.policy import DECISIONS
from agents.lab import DEFAULT_RUNS, MAX_RUNS
from agents.models import Incident, IncidentFact, PipelinePolicy, RestrictedClaim, StagePrompt

SAMPLE_MAX_CHARS = 4000

DECISION_CHOICES = [(decision, decision) for decision in DECISIONS]


class PipelinePolicyForm(forms.ModelForm):
    decisions_policy = forms.MultipleChoiceField(
        label="Decisions allowed by policy",
        choices=DECISION_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=PipelinePolicy._meta.get_field("decisions_policy").help_text,
    )
    decisions_execution = forms.MultipleChoiceField(
        label="Decisions allowed in execution",
        choices=DECISION_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=PipelinePolicy._meta.get_field("decisions_execution").help_text,
    )
    # A choice among the endpoints the operator declared, never a typed URL: the URL and the key
    # of an endpoint come from the environment together (agents/core/llm/endpoints.py).
    endpoint = forms.ChoiceField(
        label="Endpoint",
        required=False,
        help_text=PipelinePolicy._meta.get_field("endpoint").help_text,
    )

    # The second reader's endpoint, by name too; blank is no second reader.
    judge_endpoint = forms.CharField(
        label="Second reader's endpoint",
        required=False,
        widget=forms.Select,
        help_text=PipelinePolicy._meta.get_field("judge_endpoint").help_text,
    )

    class Meta:
        model = PipelinePolicy
        fields = "__all__"  # noqa: DJ007 (the ModelAdmin's fieldsets choose what is shown)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._endpoint_error = ""
        if "endpoint" in self.fields:
            self.fields["endpoint"].choices = self._endpoint_choices()
        if "judge_endpoint" in self.fields:
            self.fields["judge_endpoint"].widget.choices = self._judge_choices()
        # Declared fields are always on a ModelForm; admin's fieldsets show only the pipeline's own.
        if self._meta.fields != "__all__":
            for name in set(self.declared_fields) - set(self._meta.fields):
                del self.fields[name]

    def _endpoint_choices(self) -> list[tuple[str, str]]:
        try:
            names = [name for name in endpoint_names() if name != DEFAULT_ENDPOINT]
        except EndpointError as error:
            self._endpoint_error = str(error)
            names = []
        choices = [("", f"{DEFAULT_ENDPOINT} (OPENAI_BASE_URL, OPENAI_API_KEY)")] + [(n, n) for n in names]
        current = self.instance.endpoint if self.instance.pk else ""
        if current == DEFAULT_ENDPOINT:
            choices.append((current, current))
        elif current and current not in names:  # kept so the row's other fields can still be edited
            choices.append((current, f"{current} (not declared in this environment: runs would stop as "
                                     "llm_misconfigured)"))
        return choices

    def clean_endpoint(self):
        if self._endpoint_error:
            raise forms.ValidationError(f"The declared endpoints cannot be read: {self._endpoint_error}")
        return self.cleaned_data["endpoint"]

    def _declared(self) -> list[str]:
        try:
            return endpoint_names()
        except EndpointError as error:
            self._endpoint_error = str(error)
            return []

    def _judge_choices(self) -> list[tuple[str, str]]:
        choices = [("", "none: no second reader")] + [(name, name) for name in self._declared()]
        current = self.instance.judge_endpoint if self.instance.pk else ""
        if current and current not in dict(choices):  # shown as it is stored; saving it is refused
            choices.append((current, f"{current} (not declared in this environment)"))
        return choices

    def clean_judge_endpoint(self):
        """Only an endpoint declared here: a reader at an undeclared one could never answer, and every
        text of the policy would go to a person as judge_unavailable."""
        name = (self.cleaned_data.get("judge_endpoint") or "").strip()
        if not name:
            return ""
        declared = self._declared()
        if self._endpoint_error:
            raise forms.ValidationError(f"The declared endpoints cannot be read: {self._endpoint_error}")
        if name not in declared:
            raise forms.ValidationError(
                f"“{name}” is not a declared endpoint (declared: {', '.join(declared) or 'none'}). The operator "
                "declares endpoints in LLM_ENDPOINTS (or OPENAI_BASE_URL and OPENAI_API_KEY for “default”).")
        return name


class StagePromptForm(forms.ModelForm):
    class Meta:
        model = StagePrompt
        fields = ["stage", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 4, "cols": 80})}


def describe_trial(text: str, claim: RestrictedClaim) -> list[str]:
    """What a claim family matches in ``text``, one line a match, for a person."""
    try:
        matches = family_trial(text, claim.as_family())
    except UnsafePattern as error:
        return [f"The family cannot be tried: {error}."]
    if not matches:
        return ["The family matches nothing in the sample text."]
    lines = []
    for match in matches:
        if match.estimate:
            verdict = "an estimate: passes only where the incident gives a time for the fix"
        elif match.hedged:
            verdict = "hedged, passes"
        else:
            verdict = "a claim: stopped unless the context supports it"
        lines.append(f"“{match.found}” ({verdict}; pattern {match.pattern})")
    return lines


class RestrictedClaimForm(forms.ModelForm):
    """A claim family, with a sample text to try it on: "Try on sample text" shows what the family
    matches (and which matches a hedge lets pass) without saving anything."""

    sample_text = forms.CharField(
        label="Try it on sample text",
        required=False,
        max_length=SAMPLE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Not saved. Press “Try on sample text” to see what the family matches here, "
        "and which matches are hedged (passed by the guard).",
    )

    class Meta:
        model = RestrictedClaim
        fields = ["family", "kind", "pattern", "paraphrases", "support", "supported_by", "hedges", "hedging",
                  "strict_only", "enabled", "note"]

    trial: list[str] | None = None

    def clean_sample_text(self):
        text = self.cleaned_data.get("sample_text") or ""
        if found := control_character(text):
            raise forms.ValidationError(f"This contains a control character (U+{ord(found):04X}); remove it.")
        return text

    def _post_clean(self):
        super()._post_clean()  # the model's clean(): every pattern compiles on RE2
        text = self.cleaned_data.get("sample_text")
        if not text or any(name in self.errors for name in ("pattern", "paraphrases", "supported_by", "hedges",
                                                             "sample_text")):
            return
        self.trial = describe_trial(text, self.instance)
        if "_try" in self.data:
            # Nothing is saved on a trial: the result is shown at the field and the form comes back.
            self.add_error("sample_text", ["Trial only, nothing saved. " + self.trial[0], *self.trial[1:]])


# -- incidents ------------------------------------------------------------------------------------

# Django refuses NUL before our own check runs; say it the same way.
_NUL_MESSAGE = "The %s contains a control character (U+0000); remove it and try again."

MAX_JSON_DEPTH = 4


def _usable_text(value: str, what: str) -> None:
    """Text every page can encode and every database can store: no control characters (tab and
    newlines aside), no lone surrogates."""
    found = CONTROL.search(value)
    if found:
        raise forms.ValidationError(
            "The %(what)s contains a control character (U+%(code)04X); remove it and try again.",
            code="control_characters", params={"what": what, "code": ord(found.group())},
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise forms.ValidationError(f"The {what} contains a character that is not valid Unicode text.") from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


class IncidentJSONField(forms.JSONField):
    """An incident's JSON facts: the given shape (an object or a list of sentences), finite numbers,
    usable text, shallow nesting. An empty box means an empty object or list."""

    def __init__(self, *, shape: type, **kwargs):
        self.shape = shape
        super().__init__(**kwargs)

    def prepare_value(self, value):
        # A new incident's box shows an empty list or object, not "null".
        return super().prepare_value(self.shape() if value is None else value)

    def bound_data(self, data, initial):
        # Show what was typed, as typed: re-parsing it to re-render could crash on the very input
        # that was refused (deep nesting, lone surrogates).
        if self.disabled or data is None:
            return initial
        return InvalidJSONInput(data)

    def to_python(self, value):
        if isinstance(value, str):
            if not value.strip():
                return self.shape()
            try:
                value = json.loads(value, parse_constant=_refuse_constant)
            except (ValueError, RecursionError) as error:
                message = "too deeply nested" if isinstance(error, RecursionError) else str(error)
                raise forms.ValidationError(f"Enter valid JSON ({message}).") from None
        if value is None:
            return self.shape()
        if not isinstance(value, self.shape):
            kind = "an object like {\"key\": value}" if self.shape is dict else "a list of sentences"
            raise forms.ValidationError(f"Enter {kind}.")
        self._check(value, depth=1)
        if self.shape is list and not all(isinstance(item, str) and item.strip() for item in value):
            raise forms.ValidationError("Each entry must be a non-empty sentence (a JSON string).")
        if self.shape is list and len(value) > LIST_MAX_ITEMS:
            raise forms.ValidationError(f"At most {LIST_MAX_ITEMS} entries.")
        return value

    def _check(self, value, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise forms.ValidationError(f"Nested more than {MAX_JSON_DEPTH} levels deep.")
        if isinstance(value, float) and not math.isfinite(value):
            raise forms.ValidationError("Numbers must be finite.")
        if isinstance(value, str):
            if len(value) > ITEM_MAX_CHARS:
                raise forms.ValidationError(f"A text value is longer than {ITEM_MAX_CHARS} characters.")
            _usable_text(value, "value")
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            if isinstance(key, str):
                _usable_text(key, "key")
            self._check(item, depth + 1)


class IncidentForm(forms.ModelForm):
    regions = IncidentJSONField(shape=list, required=False, help_text='Region tokens, e.g. ["EU", "UK"]')
    policy_hints = IncidentJSONField(
        shape=dict, required=False, help_text='e.g. {"avoid_absolute_guarantees": true, "max_length_increase_pct": 20}'
    )
    approved_actions = IncidentJSONField(
        shape=list, required=False, help_text='e.g. ["monitor payment failures every 15 minutes"]'
    )
    key_messages = IncidentJSONField(shape=list, required=False, help_text="Sentences ops wants in the update")

    class Meta:
        model = Incident
        fields = "__all__"  # noqa: DJ007 (the ModelAdmin's fieldsets choose what is shown)

    def clean(self):
        data = super().clean()
        for name in ("incident_id", "title", "severity", "status"):
            if isinstance(data.get(name), str):
                try:
                    _usable_text(data[name], name.replace("_", " "))
                except forms.ValidationError as error:
                    self.add_error(name, error)
        if not self.errors:
            # Each JSON value is bounded, but not how many a policy_hints object holds: bound the
            # whole context, as run_pipeline --context does.
            if problem := context_size_problem(data):
                raise forms.ValidationError(problem)
        return data


class IncidentFactForm(forms.ModelForm):
    class Meta:
        model = IncidentFact
        fields = ["position", "key", "label", "value", "unit", "visibility"]
        error_messages = {name: {"null_characters_not_allowed": _NUL_MESSAGE % name} for name in ("label", "value")}


class LabWindowForm(forms.Form):
    """Which stored runs the policy lab replays: the newest ``last``, optionally only those created
    from ``since`` (that day included) and before ``until`` (that day excluded)."""

    prefix = "lab"

    last = forms.IntegerField(label="Newest runs", initial=DEFAULT_RUNS, min_value=1, max_value=MAX_RUNS,
                              required=False, help_text=f"At most {MAX_RUNS:,}; blank: {DEFAULT_RUNS:,}.")
    since = forms.DateField(label="Created from", required=False, widget=forms.DateInput(attrs={"type": "date"}),
                            help_text="A date (YYYY-MM-DD), that day included; blank: any.")
    until = forms.DateField(label="Created before", required=False, widget=forms.DateInput(attrs={"type": "date"}),
                            help_text="A date (YYYY-MM-DD), that day excluded; blank: up to now.")

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            raise forms.ValidationError(f"“Created from” ({since}) must be before “Created before” ({until}).")
        return data

    def window(self) -> dict:
        """The keyword arguments of :func:`agents.lab.preview` (dates as the site's midnights)."""
        data = self.cleaned_data

        def midnight(day):
            return None if day is None else timezone.make_aware(datetime.combine(day, time.min))

        return {"last": data.get("last") or DEFAULT_RUNS, "since": midnight(data.get("since")),
                "until": midnight(data.get("until"))}
