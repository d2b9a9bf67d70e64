"""Admin forms for policies: the allowlists as checkboxes. The rules themselves are in the models'
``clean()``, so they hold for any form that validates a row."""

from django import forms

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
    base_url = forms.URLField(
        label="Base URL",
        assume_scheme="https",  # a local server is typed with its http:// (Django 6 default)
        required=False,
        help_text=PipelinePolicy._meta.get_field("base_url").help_text,
    )

    class Meta:
        model = PipelinePolicy
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Declared fields are always on a ModelForm; admin's fieldsets show only the pipeline's own.
        if self._meta.fields != "__all__":
            for name in set(self.declared_fields) - set(self._meta.fields):
                del self.fields[name]


class StagePromptForm(forms.ModelForm):
    class Meta:
        model = StagePrompt
        fields = ["stage", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 4, "cols": 80})}
