"""The policy lab in the admin: "Preview impact" on a change form replays the stored runs under the
form's values without saving them (agents.lab), and a save of exactly those values afterwards keeps
the preview's summary with its PolicyChange."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from agents.forms import LabWindowForm
from agents.lab import PreviewStopped, one_preview_per_person, pattern_list_problems, preview
from agents.models import snapshot

# The session key of the previews not yet saved: "<model label>:<pk or new>" -> values and summary.
SESSION_KEY = "policy_lab_previews"
SHOWN_FLIPS = 200  # the page lists this many flipped runs; the counts cover them all
SHOWN_DIVERGED = 50
NOT_REPOSTED = ("csrfmiddlewaretoken", "_preview")


def _values(obj) -> dict:
    """What a save records as ``after``, without the id a new row gets only when saved."""
    values = snapshot(obj)
    values.pop("id", None)
    return values


def preview_key(obj) -> str:
    return f"{obj._meta.label_lower}:{obj.pk if obj.pk is not None else 'new'}"


def remember_preview(request, obj, summary: dict) -> None:
    previews = request.session.get(SESSION_KEY, {})
    previews[preview_key(obj)] = {"values": _values(obj), "summary": summary}
    request.session[SESSION_KEY] = previews


def previewed_summary(request, obj, key: str) -> dict | None:
    """The summary of the preview made on exactly the values ``obj`` now holds (once: it is taken)."""
    previews = request.session.get(SESSION_KEY) or {}
    entry = previews.get(key)
    if entry is None or entry["values"] != _values(obj):
        return None
    del previews[key]
    request.session[SESSION_KEY] = previews
    return entry["summary"]


class PreviewAdmin(admin.ModelAdmin):
    """A change form with "Preview impact", and the page that shows it."""

    change_form_template = "admin/agents/preview_change_form.html"

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_preview"
        view = self.admin_site.admin_view(self.preview_view)
        return [path("add/preview/", view, name=f"{name}_add"),
                path("<path:object_id>/preview/", view, name=name), *super().get_urls()]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        name = f"admin:{self.opts.app_label}_{self.opts.model_name}_preview"
        context["preview_url"] = reverse(name, args=[obj.pk]) if obj is not None else reverse(f"{name}_add")
        context["lab_form"] = LabWindowForm()
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def preview_view(self, request, object_id=None):
        obj = self.get_object(request, unquote(object_id)) if object_id is not None else None
        if object_id is not None and obj is None:
            raise Http404(f"No {self.opts.verbose_name} with id {object_id!r}.")
        if not (self.has_change_permission(request, obj) if obj else self.has_add_permission(request)):
            raise PermissionDenied
        form_url = (reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[obj.pk])
                    if obj is not None else reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_add"))
        if request.method != "POST":  # a reloaded or bookmarked preview: its values are gone, back to the form
            return HttpResponseRedirect(form_url)
        form = self.get_form(request, obj, change=obj is not None)(request.POST, request.FILES, instance=obj)
        window = LabWindowForm(request.POST)
        report, stopped = None, []
        if form.is_valid() and window.is_valid():
            for name, problem in pattern_list_problems(form.instance).items():
                form.add_error(name, problem)
        if not form.errors and window.is_valid():
            try:
                with one_preview_per_person(request.user.pk):
                    report = preview(form.instance, **window.window(), cpu_seconds=settings.POLICY_LAB_CPU_SECONDS)
            except PreviewStopped as why:
                stopped = [str(why)]
            else:
                remember_preview(request, form.instance, report.summary())
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "original": obj, "title": f"Impact of the change to {form.instance}",
            "report": report, "problems": _problems(form) + _problems(window) + stopped, "form_url": form_url,
            "reposted": [(k, v) for k in request.POST if k not in NOT_REPOSTED for v in request.POST.getlist(k)],
            "flips": report.flips[:SHOWN_FLIPS] if report else [],
            "diverged": report.diverged[:SHOWN_DIVERGED] if report else [],
            "shown_flips": SHOWN_FLIPS, "shown_diverged": SHOWN_DIVERGED,
        }
        return TemplateResponse(request, "admin/agents/preview.html", context)


def _problems(form) -> list[str]:
    """Each error of a bound form, prefixed with its field's label."""
    return [f"{form.fields[name].label}: {error}" if name in form.fields else str(error)
            for name, errors in form.errors.items() for error in errors]
