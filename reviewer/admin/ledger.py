"""The ledger in the admin, read-only (docs/ledger.md)."""

from django.contrib import admin

from agents.admin.base import ReadOnlyMixin
from reviewer.models import LedgerEntry


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The ledger, read-only (docs/ledger.md); ``manage.py verify_ledger`` checks its chain."""

    list_display = ["seq", "kind", "subject", "created_at", "hash"]
    list_filter = ["kind"]
    search_fields = ["subject"]
    fields = ["seq", "kind", "subject", "created_at", "content", "prev_hash", "hash"]
    readonly_fields = fields
