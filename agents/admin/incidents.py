"""Admin for incidents: the incident and its facts (in line) are saved together by one
``agents.incidents.update_incident``, which records a version by the admin when anything changed."""

import copy

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet

from agents.admin.base import LabelledTabularInline
from agents.core.inputs import context_size_problem
from agents.forms import IncidentFactForm, IncidentForm
from agents.incidents import FACT_FIELDS, FIELDS, update_incident
from agents.models import Incident, IncidentFact


class IncidentFactFormSet(BaseInlineFormSet):
    def clean(self):
        """The incident's context with these facts stays within its bound (``CONTEXT_MAX_BYTES``):
        said here, on the page, before ``update_incident`` would refuse the save."""
        super().clean()
        if any(self.errors):
            return
        deleted = {id(form) for form in self.deleted_forms} if self.can_delete else set()
        facts = [form.instance for form in self.forms
                 if id(form) not in deleted and (form.instance.pk is not None or form.has_changed())]
        incident = copy.copy(self.instance)  # the incident as its form changes it, not saved
        incident.fact_list = lambda: facts  # a new incident has no rows to read them from yet
        if problem := context_size_problem(incident.context()):
            raise ValidationError(problem)


class IncidentFactInline(LabelledTabularInline):
    """The facts, edited in line with the incident: one row each (key, label, value, unit, and who may
    read it: public, or internal for people and the reviewer only)."""

    model = IncidentFact
    form = IncidentFactForm
    formset = IncidentFactFormSet
    fields = ["position", "key", "label", "value", "unit", "visibility"]
    extra = 1
    max_num = 50


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    form = IncidentForm
    list_display = ["incident_id", "title", "severity", "region", "state", "status", "report_date"]
    list_filter = ["severity", "state"]
    search_fields = ["incident_id", "title"]
    inlines = [IncidentFactInline]

    def save_model(self, request, obj, form, change):
        """Nothing yet: ``save_related`` writes the incident with its facts, once both are known."""

    def save_formset(self, request, form, formset, change):
        # Nothing written here either: save(commit=False) says what the forms change (for the change
        # message); save_related hands those changes to update_incident.
        formset.save(commit=False)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        facts = [fact for formset in formsets for fact in _fact_changes(formset)]
        fields = {name: form.cleaned_data[name] for name in FIELDS if name in form.cleaned_data}
        incident = form.instance
        written = update_incident(incident if change else fields["incident_id"], user=request.user,
                                  create=not change, update=change, upsert_facts=facts, **fields).incident
        # The admin goes on with this object (its history entry, the redirect): make it the saved row.
        incident.pk, incident._state.adding, incident._state.db = written.pk, False, written._state.db


def _fact_changes(formset) -> list[dict]:
    """What an inline formset changes, after ``save(commit=False)``, as ``update_incident``'s
    ``upsert_facts``: the rows it keeps (as edited) and adds, and a removal (value None) for each key
    it showed that is gone (a deleted row, or a row whose key was changed). Facts the page did not
    show (added meanwhile by someone else) are left alone."""
    deleted = {id(fact) for fact in formset.deleted_objects}
    kept = [form.instance for form in formset.initial_forms
            if form.instance.pk is not None and id(form.instance) not in deleted]
    facts = [{name: getattr(fact, name) for name in FACT_FIELDS} for fact in [*kept, *formset.new_objects]]
    shown = {form.initial.get("key") for form in formset.initial_forms} - {None}
    gone = shown - {fact["key"] for fact in facts}
    return facts + [{"key": key, "value": None} for key in sorted(gone)]
