"""The policy lab in the admin: "Preview impact" on a change form replays the stored runs under the
form's values without saving them (agents.lab), and a save of exactly those values afterwards keeps
the preview's summary with its PolicyChange. The form keeps the previewed values until they are saved
or discarded: going back to it (the result page's link, the browser's Back) shows them, not the saved ones."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect, QueryDict
from django.template.response import TemplateResponse
from django.urls import path, reverse

from agents.forms import LabWindowForm
from agents.lab import PreviewStopped, one_preview_per_person, pattern_list_problems, preview
from agents.models import snapshot

# The session key of the previews not yet saved: "<model label>:<pk or new>" -> values and summary.
SESSION_KEY = "policy_lab_previews"
# The session key of the forms last previewed, not yet saved or discarded: the same key -> the form's fields.
FORMS_KEY = "policy_lab_forms"
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


def remember_form(request, key: str) -> None:
    forms = request.session.get(FORMS_KEY, {})
    forms[key] = [(k, v) for k in request.POST if k not in NOT_REPOSTED for v in request.POST.getlist(k)]
    request.session[FORMS_KEY] = forms


def previewed_form(request, key: str) -> QueryDict | None:
    """The fields of the form last previewed for ``key``, as the form posted them."""
    fields = (request.session.get(FORMS_KEY) or {}).get(key)
    if fields is None:
        return None
    data = QueryDict(mutable=True)
    for name, value in fields:
        data.appendlist(name, value)
    return data


def forget_form(request, key: str) -> None:
    forms = request.session.get(FORMS_KEY) or {}
    if forms.pop(key, None) is not None:
        request.session[FORMS_KEY] = forms


class PreviewAdmin(admin.ModelAdmin):
    """A change form with "Preview impact", and the page that shows it."""

    change_form_template = "admin/agents/preview_change_form.html"

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_preview"
        view = self.admin_site.admin_view(self.preview_view)
        return [path("add/preview/", view, name=f"{name}_add"),
                path("<path:object_id>/preview/", view, name=name), *super().get_urls()]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        key = f"{self.opts.label_lower}:{object_id if object_id is not None else 'new'}"
        if request.method == "GET" and "discard_preview" in request.GET:
            forget_form(request, key)
            return HttpResponseRedirect(request.path)
        if request.method == "GET" and (data := previewed_form(request, key)) is not None:
            request.previewed_data = data  # get_form binds the form to it
            extra_context = {**(extra_context or {}), "previewed_values": True}
        response = super().changeform_view(request, object_id, form_url, extra_context)
        if request.method == "POST" and response.status_code == 302:  # saved: the preview's values are the row's
            forget_form(request, key)
        return response

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)
        data = getattr(request, "previewed_data", None)
        if data is None:
            return form_class

        class PreviewedForm(form_class):
            """The change form filled with the values last previewed, checked as a save would check them."""

            def __init__(self, *args, **kwargs):
                if not args and "data" not in kwargs:
                    args = (data,)
                super().__init__(*args, **kwargs)

        return PreviewedForm

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
        remember_form(request, f"{self.opts.label_lower}:{object_id if object_id is not None else 'new'}")
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
