"""Admin for what a model endpoint can bear; every change is recorded as a PolicyChange."""

from django.contrib import admin

from agents.admin.policies import RecordedAdmin
from agents.models import EndpointLimit


@admin.register(EndpointLimit)
class EndpointLimitAdmin(RecordedAdmin):
    list_display = ("endpoint", "concurrency", "max_completion_tokens", "updated_at")
    fields = ("endpoint", "concurrency", "max_completion_tokens")
