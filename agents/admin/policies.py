"""Admin for policies and the shared lists they read: every save and delete through it is recorded
as a PolicyChange, which its own admin shows read-only."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from agents.admin.base import LabelledTabularInline
from agents.admin.lab import PreviewAdmin, preview_key, previewed_summary
from agents.core.policy import POLICY_CLASSES
from agents.forms import PipelinePolicyForm, RestrictedClaimForm, StagePromptForm
from agents.models import (
    BUDGET_FIELDS,
    JUDGE_FIELDS,
    PIPELINE_STAGES,
    GroundingTerm,
    IssueType,
    PipelinePolicy,
    PolicyChange,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    StagePrompt,
    is_text_pipeline,
    policy_fields,
    snapshot,
)

HISTORY_ROWS = 10


def _policy_of(obj) -> PipelinePolicy | None:
    if isinstance(obj, PipelinePolicy):
        return obj if obj.pk else None
    if isinstance(obj, StagePrompt):
        return obj.policy
    return None


class RecordedAdmin(PreviewAdmin):
    """Writes a PolicyChange (who, when, before, after) for each add, change and delete; a change
    saved as it was previewed keeps the preview's summary (agents/admin/lab.py)."""

    def save_model(self, request, obj, form, change):
        # The form has already written its values onto obj: "before" must come from the database.
        before = snapshot(type(obj).objects.get(pk=obj.pk)) if change else None
        key = preview_key(obj)  # before the save gives a new row its id
        super().save_model(request, obj, form, change)
        after = snapshot(obj)
        if before != after:
            PolicyChange.record(
                request.user, obj, PolicyChange.CHANGED if change else PolicyChange.ADDED,
                before=before, after=after, policy=_policy_of(obj), preview=previewed_summary(request, obj, key),
            )

    def save_formset(self, request, form, formset, change):
        befores = {
            id(f.instance): snapshot(type(f.instance).objects.get(pk=f.instance.pk))
            for f in formset.initial_forms
            if f.instance.pk
        }
        ids = {id(f.instance): f.instance.pk for f in formset.initial_forms}
        super().save_formset(request, form, formset, change)
        for obj in formset.new_objects:
            PolicyChange.record(
                request.user, obj, PolicyChange.ADDED, after=snapshot(obj), policy=_policy_of(obj)
            )
        for obj, _fields in formset.changed_objects:
            PolicyChange.record(
                request.user, obj, PolicyChange.CHANGED, before=befores[id(obj)], after=snapshot(obj),
                policy=_policy_of(obj),
            )
        for obj in formset.deleted_objects:
            PolicyChange.record(
                request.user, obj, PolicyChange.DELETED, before=befores[id(obj)], object_id=ids[id(obj)],
                policy=_policy_of(obj),
            )

    def _doomed(self, obj) -> list:
        """The rows a delete of ``obj`` removes, as (row, pk, snapshot, policy that outlives it)."""
        return [(obj, obj.pk, snapshot(obj), None if isinstance(obj, PipelinePolicy) else _policy_of(obj))]

    def _record_deleted(self, request, doomed) -> None:
        for obj, pk, before, policy in doomed:
            PolicyChange.record(request.user, obj, PolicyChange.DELETED, before=before, object_id=pk, policy=policy)

    def delete_model(self, request, obj):
        doomed = self._doomed(obj)
        super().delete_model(request, obj)
        self._record_deleted(request, doomed)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            doomed = [row for obj in queryset for row in self._doomed(obj)]
            super().delete_queryset(request, queryset)
            self._record_deleted(request, doomed)


class StagePromptInline(LabelledTabularInline):
    model = StagePrompt
    form = StagePromptForm
    extra = 0

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        if obj is not None:  # offer only the stages this pipeline asks the model
            field = formset.form.base_fields["stage"]
            field.choices = [("", "---------")] + [(s, s) for s in PIPELINE_STAGES[obj.pipeline]]
            field.help_text = "Stages without a prompt here use the default prompt."
        return formset


def _chosen_pipeline(request, obj) -> str | None:
    pipeline = obj.pipeline if obj else request.POST.get("pipeline") or request.GET.get("pipeline")
    return pipeline if pipeline in POLICY_CLASSES else None


@admin.register(PipelinePolicy)
class PipelinePolicyAdmin(RecordedAdmin):
    form = PipelinePolicyForm
    inlines = [StagePromptInline]
    list_display = ("name", "pipeline", "active", "auto_revision", "auto_publish", "max_seconds", "model_name",
                    "updated_at")
    list_display_links = ("name",)
    list_filter = ("pipeline", "active", "auto_revision")
    search_fields = ("name",)
    actions = ["switch_auto_revision_off", "switch_auto_revision_on"]

    def get_readonly_fields(self, request, obj=None):
        # A row's pipeline decides which budgets it has: it is chosen once, when the row is added.
        return ("pipeline", "change_history") if obj else ()

    def get_fieldsets(self, request, obj=None):
        pipeline = _chosen_pipeline(request, obj)
        used = policy_fields(pipeline) if pipeline else set(BUDGET_FIELDS) | {"auto_revision"}
        text = pipeline is None or is_text_pipeline(pipeline)
        fieldsets = [(None, {"fields": ["pipeline", "name", "active"]})]
        if text:
            fieldsets.append((
                "Emergency brake",
                {
                    "fields": ["auto_revision"],
                    "description": "Switch auto-revision off to stop every automatic rewrite at once: "
                    "“revise” leaves the execution allowlist and such runs stop for a person instead.",
                },
            ))
            fieldsets.append(("Decisions", {"fields": ["decisions_policy", "decisions_execution"]}))
            fieldsets.append((
                "Grounding",
                {
                    "fields": ["grounding"],
                    "description": "Off by default. On, each sentence of a customer text passes only when the "
                    "incident supports it or it is ordinary update language (Grounding terms); anything else "
                    "goes to a person with the sentence and the unsupported words marked.",
                },
            ))
            fieldsets.append((
                "Second reader",
                {
                    "fields": list(JUDGE_FIELDS),
                    "description": "Off by default. With an endpoint and a model, a second model reads every final "
                    "text against the incident's public facts after the deterministic checks; what it finds "
                    "unsupported, or no usable answer from it, sends the text to a person. It can only add "
                    "findings, never clear one.",
                },
            ))
            fieldsets.append((
                "Publishing",
                {
                    "fields": ["auto_publish"],
                    "description": "Off by default: an update reaches customers when ops or a lead clicks "
                    "“Publish”. On, a run that passed every gate is published at once to every enabled "
                    "delivery channel; escalated runs still wait for a lead.",
                },
            ))
        budgets = [name for name in BUDGET_FIELDS if name in used]
        description = "Blank: the contract's default."
        if pipeline is None:
            description += " Only the budgets of the chosen pipeline are kept."
        fieldsets.append(("Budgets", {"fields": budgets, "description": description}))
        fieldsets.append(("Token and cost budgets", {"fields": ["max_tokens", "max_cost"]}))
        fieldsets.append((
            "Model endpoint",
            {
                "fields": ["model_name", "endpoint", "structured_output", "timeout_seconds", "max_retries",
                           "max_completion_tokens", "input_cost_per_1k", "output_cost_per_1k"],
                "description": "Endpoints, their base URLs and their API keys are declared by the operator "
                "in the environment (LLM_ENDPOINTS, OPENAI_*); here a policy only chooses one by name.",
            },
        ))
        if obj is not None:
            fieldsets.append(("History of changes", {"fields": ["change_history"]}))
        return fieldsets

    @admin.display(description="Recent changes")
    def change_history(self, obj):
        changes = obj.changes.select_related("user")[:HISTORY_ROWS]
        url = reverse("admin:agents_policychange_changelist") + f"?policy__id__exact={obj.pk}"
        link = format_html('<a href="{}">History of changes</a>', url)
        if not changes:
            return format_html("No recorded changes yet. {}", link)
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td></tr>",
            (
                (c.at.strftime("%Y-%m-%d %H:%M"), c.username or "—", c.model_label.split(".")[-1],
                 c.action, ", ".join(c.changed_fields))
                for c in changes
            ),
        )
        return format_html(
            "<table><tr><th>when</th><th>who</th><th>what</th><th>fields</th></tr>{}</table>{}", rows, link
        )

    def _switch_auto_revision(self, request, queryset, on: bool):
        text = [p for p in POLICY_CLASSES if is_text_pipeline(p)]
        switched = 0
        with transaction.atomic():
            for policy in queryset.select_for_update().filter(pipeline__in=text, auto_revision=not on):
                before = snapshot(policy)
                policy.auto_revision = on
                policy.save(update_fields=["auto_revision", "updated_at"])
                PolicyChange.record(
                    request.user, policy, PolicyChange.CHANGED, before=before, after=snapshot(policy), policy=policy
                )
                switched += 1
        state = "on" if on else "off"
        self.message_user(
            request, f"Auto-revision switched {state} for {switched} polic{'y' if switched == 1 else 'ies'}.",
            messages.SUCCESS if switched else messages.WARNING,
        )

    @admin.action(description="Switch auto-revision off (emergency brake)", permissions=["change"])
    def switch_auto_revision_off(self, request, queryset):
        self._switch_auto_revision(request, queryset, on=False)

    @admin.action(description="Switch auto-revision back on", permissions=["change"])
    def switch_auto_revision_on(self, request, queryset):
        self._switch_auto_revision(request, queryset, on=True)

    def _doomed(self, obj):
        # Deleting a policy deletes its prompts too: record those, so nothing disappears unrecorded.
        prompts = [(p, p.pk, snapshot(p), None) for p in obj.stage_prompts.all()]
        return prompts + super()._doomed(obj)


@admin.register(IssueType)
class IssueTypeAdmin(RecordedAdmin):
    list_display = ("name", "high_risk", "enabled", "description")
    list_filter = ("high_risk", "enabled")
    search_fields = ("name", "description")


@admin.register(RouteTarget)
class RouteTargetAdmin(RecordedAdmin):
    list_display = ("name", "worker", "allowed_policy", "allowed_execution", "description")
    list_filter = ("allowed_policy", "allowed_execution")
    search_fields = ("name", "description", "worker")


@admin.register(RestrictedClaim)
class RestrictedClaimAdmin(RecordedAdmin):
    """Claim families; the change form tries a family on a sample text."""

    form = RestrictedClaimForm
    change_form_template = "admin/agents/restrictedclaim/change_form.html"
    list_display = ("family", "kind", "support", "strict_only", "enabled", "note")
    list_filter = ("enabled", "kind", "support", "strict_only")
    search_fields = ("family", "pattern", "paraphrases", "note")
    fields = ("family", "kind", "pattern", "paraphrases", "support", "supported_by", "hedges", "hedging",
              "strict_only", "enabled", "note", "sample_text")

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if form.trial:
            messages.info(request, "On the sample text: " + " · ".join(form.trial))


@admin.register(RegionToken)
class RegionTokenAdmin(RecordedAdmin):
    list_display = ("token", "words", "enabled")
    list_filter = ("enabled",)
    search_fields = ("token", "words")


@admin.register(GroundingTerm)
class GroundingTermAdmin(RecordedAdmin):
    """The grounding vocabulary: ordinary update language a sentence may use without the incident's
    support (docs/guard.md, 'Grounding')."""

    list_display = ("text", "advice", "action", "enabled", "note")
    list_filter = ("enabled", "advice", "action")
    search_fields = ("text", "note")


@admin.register(PolicyChange)
class PolicyChangeAdmin(admin.ModelAdmin):
    """The record is read-only: nobody adds, edits or deletes history through admin."""

    list_display = ("at", "username", "action", "model_label", "object_repr", "fields_changed")
    fields = ("at", "user", "username", "action", "model_label", "object_id", "object_repr", "policy",
              "differences", "before_json", "after_json", "preview_summary")
    readonly_fields = ("differences", "before_json", "after_json", "preview_summary")
    list_filter = ("action", "model_label", "policy", "user")
    search_fields = ("object_repr", "username", "object_id")
    date_hierarchy = "at"
    list_select_related = ("user", "policy")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="fields")
    def fields_changed(self, obj):
        return ", ".join(obj.changed_fields)

    @admin.display(description="changed fields")
    def differences(self, obj):
        before, after = obj.before or {}, obj.after or {}
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((name, _json(before.get(name)), _json(after.get(name))) for name in obj.changed_fields),
        )
        return format_html("<table><tr><th>field</th><th>before</th><th>after</th></tr>{}</table>", rows)

    @admin.display(description="before")
    def before_json(self, obj):
        return format_html("<pre>{}</pre>", _json(obj.before, indent=2))

    @admin.display(description="after")
    def after_json(self, obj):
        return format_html("<pre>{}</pre>", _json(obj.after, indent=2))

    @admin.display(description="preview before saving")
    def preview_summary(self, obj):
        if not obj.preview:
            return "Saved without a preview of these values."
        return format_html("<p>{}</p><pre>{}</pre>", obj.preview.get("headline", ""), _json(obj.preview, indent=2))


def _json(value, indent=None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)
