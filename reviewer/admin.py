"""Runs, escalations and decisions in the admin: read-only records (they are written by the
pipelines and by people's decisions, never edited by hand). Incidents are editable."""

from django.contrib import admin

from agents.models import AuditDiff, Incident, ModelCall, Review, Run, TraceStep
from reviewer.forms import IncidentForm
from reviewer.models import Decision, Escalation


class ReadOnlyMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    form = IncidentForm
    list_display = ["incident_id", "title", "severity", "region", "status", "report_date"]
    list_filter = ["severity", "region"]
    search_fields = ["incident_id", "title"]


class TraceStepInline(ReadOnlyMixin, admin.TabularInline):
    model = TraceStep
    fields = ["index", "phase", "status", "stop_reason", "decision", "duration_ms", "measurements"]
    readonly_fields = fields
    extra = 0


class ModelCallInline(ReadOnlyMixin, admin.TabularInline):
    model = ModelCall
    fields = ["stage", "attempt", "try_number", "delivery", "model", "latency_ms", "prompt_tokens",
              "completion_tokens", "outcome"]
    readonly_fields = fields
    extra = 0


class ReviewInline(ReadOnlyMixin, admin.StackedInline):
    model = Review
    readonly_fields = ["kind", "decision", "severity", "issues", "instructions", "reason", "quality", "completeness"]
    fields = readonly_fields


class AuditInline(ReadOnlyMixin, admin.StackedInline):
    model = AuditDiff
    readonly_fields = ["changed", "before_hash", "after_hash", "before_chars", "after_chars", "delta",
                       "length_increase_pct", "diff_unit", "unified_diff"]
    fields = readonly_fields


@admin.register(Run)
class RunAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "pipeline", "incident", "status", "stop_reason", "outcome", "model_label", "created_at"]
    list_filter = ["pipeline", "status", "stop_reason"]
    list_select_related = ["incident"]
    search_fields = ["goal", "stop_reason"]
    inlines = [TraceStepInline, ModelCallInline, ReviewInline, AuditInline]


class DecisionInline(ReadOnlyMixin, admin.TabularInline):
    model = Decision
    fields = ["at", "actor", "action", "note", "final_text"]
    readonly_fields = fields
    extra = 0


@admin.register(Escalation)
class EscalationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "run", "stop_reason", "status", "opened_at", "claimed_by", "decided_by"]
    list_filter = ["status", "stop_reason"]
    list_select_related = ["run", "claimed_by", "decided_by"]
    inlines = [DecisionInline]
