"""The desk's records in the admin: escalations with their decisions and approvals (read-only),
every decision with the dataset exports (docs/datasets.md), and the approval rules an admin keeps."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse

from agents.admin.base import ReadOnlyMixin
from reviewer.desk import datasets
from reviewer.models import Approval, ApprovalRule, Decision, Escalation


class DecisionInline(ReadOnlyMixin, admin.TabularInline):
    model = Decision
    fields = ["at", "actor", "action", "note", "final_text"]
    readonly_fields = fields
    extra = 0


class ApprovalInline(ReadOnlyMixin, admin.TabularInline):
    model = Approval
    fields = ["at", "user", "text_version", "text_hash", "superseded_at", "superseded_because"]
    readonly_fields = fields
    extra = 0


@admin.register(Escalation)
class EscalationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "run", "stop_reason", "status", "required_approvals", "opened_at", "taken_by",
                    "decided_by"]
    list_filter = ["status", "stop_reason"]
    list_select_related = ["run", "taken_by", "decided_by"]
    inlines = [DecisionInline, ApprovalInline]


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(admin.ModelAdmin):
    """How many approvals escalations need, and from whom (docs/operations.md, 'Approvals by more than one
    person'). The strictest rule that fits applies; an escalation keeps what applied when it opened."""

    list_display = ["name", "pipeline", "severity", "stop_reason", "overrides_guard", "required_approvals", "group"]
    list_editable = ["required_approvals"]
    list_select_related = ["group"]


def export_action(dataset: str):
    def export(modeladmin, request, queryset):
        try:
            body = datasets.export(request.user, dataset, rows=queryset, door="admin")
        except PermissionDenied as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
            return None
        response = HttpResponse(body, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="decisions-{dataset}.jsonl"'
        return response

    export.__name__ = f"export_{dataset}"
    export.short_description = f"Export the selected decisions as {dataset} JSONL (recorded in the ledger)"
    return export


@admin.register(Decision)
class DecisionAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Every decision, read-only; the actions export the selected ones as datasets (docs/datasets.md)."""

    list_display = ["id", "at", "actor", "action", "escalation"]
    list_filter = ["action", "escalation__run__pipeline"]
    date_hierarchy = "at"
    list_select_related = ["actor", "escalation"]
    search_fields = ["escalation__run__incident__incident_id"]
    actions = [export_action(name) for name in datasets.FORMATS]
