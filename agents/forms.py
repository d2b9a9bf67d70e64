"""Admin forms for policies: the allowlists as checkboxes. The rules themselves are in the models'
``clean()``, so they hold for any form that validates a row."""

from django import forms

from agents.core.llm.endpoints import DEFAULT_ENDPOINT, EndpointError, endpoint_names
from agents.core.policy import DECISIONS
from agents.models import PipelinePolicy, StagePrompt

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
    # of an endpoint come from the environment together (agents/llm/endpoints.py).
    endpoint = forms.ChoiceField(
        label="Endpoint",
        required=False,
        help_text=PipelinePolicy._meta.get_field("endpoint").help_text,
    )

    class Meta:
        model = PipelinePolicy
        fields = "__all__"  # noqa: DJ007 (the ModelAdmin's fieldsets choose what is shown)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._endpoint_error = ""
        if "endpoint" in self.fields:
            self.fields["endpoint"].choices = self._endpoint_choices()
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


class StagePromptForm(forms.ModelForm):
    class Meta:
        model = StagePrompt
        fields = ["stage", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 4, "cols": 80})}
