"""The learning loop in the admin (docs/learning-loop.md): the scorecard per check and claim family,
and the amendments the miner proposed, each with its replay card, accepted (with the approval rule's
quorum for a loosening) or dismissed with a reason. Nothing is applied from a list or by itself: only
the accept form on an amendment's card changes a policy row."""

from __future__ import annotations

from datetime import datetime, time

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_POST

from agents.models import PolicyChange
from reviewer.learning import amendments
from reviewer.models import Amendment, Decision
from reviewer.models.learning import scorecard


class WindowForm(forms.Form):
    since = forms.DateField(required=False, label="Decided from (YYYY-MM-DD)",
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Decided until (YYYY-MM-DD, included)",
                            widget=forms.DateInput(attrs={"type": "date"}))


class ReasonForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=2000,
                             label="Reason (kept in the policy history)")


def _day(value, end=False):
    return timezone.make_aware(datetime.combine(value, time.max if end else time.min)) if value else None


@admin.register(Amendment)
class AmendmentAdmin(admin.ModelAdmin):
    list_display = ["title", "kind", "status", "gain", "contradictions", "approvals", "proposed_at"]
    list_filter = ["status", "kind"]
    list_display_links = ["title"]
    change_list_template = "admin/reviewer/amendment/change_list.html"

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="agreement gain")
    def gain(self, obj):
        return (obj.replay or {}).get("agreement_gain", "–")

    @admin.display(description="contradicts")
    def contradictions(self, obj):
        return (obj.replay or {}).get("contradict_count", "–")

    @admin.display(description="approvals")
    def approvals(self, obj):
        return f"{obj.approvals_so_far} of {obj.required_approvals}" if obj.loosening else "–"

    def get_urls(self):
        own = [
            path("scorecard/", self.admin_site.admin_view(self.scorecard_view), name="reviewer_amendment_scorecard"),
            path("mine/", self.admin_site.admin_view(require_POST(self.mine_view)), name="reviewer_amendment_mine"),
            path("<int:pk>/accept/", self.admin_site.admin_view(require_POST(self.accept_view)),
                 name="reviewer_amendment_accept"),
            path("<int:pk>/dismiss/", self.admin_site.admin_view(require_POST(self.dismiss_view)),
                 name="reviewer_amendment_dismiss"),
        ]
        return own + super().get_urls()

    def _context(self, request, title: str, **more) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, "title": title, **more}

    def scorecard_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = WindowForm(request.GET or None)
        rows = Decision.objects.all()
        if form.is_valid():
            if since := _day(form.cleaned_data["since"]):
                rows = rows.filter(at__gte=since)
            if until := _day(form.cleaned_data["until"], end=True):
                rows = rows.filter(at__lte=until)
        card = scorecard(rows)
        versions = {c.pk: c for c in PolicyChange.objects.filter(pk__in={f.version for f in card.by_version})}
        by_version = [(f, versions.get(f.version)) for f in card.by_version]
        return TemplateResponse(request, "admin/reviewer/amendment/scorecard.html",
                                self._context(request, "Guard scorecard", card=card, form=form, by_version=by_version))

    def mine_view(self, request):
        if not self.has_change_permission(request):
            raise PermissionDenied
        made = amendments.propose()
        self.message_user(request, f"{len(made)} new amendment{'s' if len(made) != 1 else ''} proposed, each "
                                   "replayed in the policy lab. Nothing was applied.", messages.SUCCESS)
        return redirect("admin:reviewer_amendment_changelist")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        amendment = get_object_or_404(Amendment.objects.select_related("decided_by", "policy_change"), pk=object_id)
        if not self.has_view_permission(request, amendment):
            raise PermissionDenied
        approvals = list(amendment.approvals.select_related("user"))
        return TemplateResponse(request, "admin/reviewer/amendment/card.html", self._context(
            request, amendment.title, amendment=amendment, card=amendment.replay or {},
            evidence=amendment.evidence or {}, approvals=approvals, form=ReasonForm(),
            can_decide=self.has_change_permission(request, amendment)
            and amendment.status == Amendment.Status.PROPOSED))

    def _decide(self, request, pk: int, action):
        form = ReasonForm(request.POST)
        if not self.has_change_permission(request):
            raise PermissionDenied
        if not form.is_valid():
            self.message_user(request, "Write the reason: it is kept in the policy history.", messages.ERROR)
            return redirect("admin:reviewer_amendment_change", pk)
        try:
            outcome = action(pk, request.user, form.cleaned_data["reason"])
        except (amendments.AmendmentRefused, PermissionDenied) as refused:
            self.message_user(request, str(refused), messages.ERROR)
            return redirect("admin:reviewer_amendment_change", pk)
        self.message_user(request, outcome.message, messages.SUCCESS if outcome.done else messages.INFO)
        return redirect("admin:reviewer_amendment_change", pk)

    def accept_view(self, request, pk: int):
        return self._decide(request, pk, amendments.accept)

    def dismiss_view(self, request, pk: int):
        return self._decide(request, pk, amendments.dismiss)
