"""Runs in the admin: read-only records of what a pipeline did (its trace, model calls, review and
audit), written by the worker and never edited by hand."""

from django.contrib import admin

from agents.admin.base import ReadOnlyMixin
from agents.models import AuditDiff, ModelCall, Review, Run, TraceStep


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
