"""Forms of the dashboard: starting a run from an incident, filtering the run list and publishing an
update; the admin forms of notification channels and holding statements."""

from __future__ import annotations

import hashlib
import json
import uuid

from django import forms

from agents.core.inputs import CONTROL, GOAL_MAX_CHARS, TICKET_MAX_CHARS, context_problem, not_one_line
from agents.core.policy import PIPELINE_CHOICES, TEXT_PIPELINES
from agents.core.units import UNITS
from agents.models import IN_FLIGHT_FILTER, Run
from agents.models.incidents import STATES, VISIBILITIES
from reviewer.models import ComponentStatus, HoldingStatement, Impact, NotificationChannel, StatusComponent
from reviewer.outbox.publishing import (
    CONFIRM_IMPACT,
    CONFIRM_REPEAT,
    MAX_TITLE_CHARS,
    PublicFields,
    impact_floor,
    last_published,
    severity_of,
    suggested_components,
)

# Django refuses NUL before our own check runs; say it the same way.
_NUL_MESSAGE = "The %s contains a control character (U+0000); remove it and try again."


def default_goal(pipeline: str, incident) -> str:
    """What a text pipeline is asked to write when ops does not say otherwise; routing has no default."""
    if pipeline in TEXT_PIPELINES and incident is not None:
        return f"Write the customer update for {incident.title}."
    return ""


def refuse_control_characters(value: str, what: str) -> str:
    found = CONTROL.search(value)
    if found:
        raise forms.ValidationError(
            "The %(what)s contains a control character (U+%(code)04X); remove it and try again.",
            code="control_characters", params={"what": what, "code": ord(found.group())},
        )
    return value


class StartRunForm(forms.Form):
    """The pipeline and its input: a goal for the text pipelines, the ticket text for routing.

    ``idempotency_key`` is a fresh uuid each time the form is rendered; posting the same rendered form
    twice (a double click, a resubmit) carries the same key, and ``start_run`` returns the first run.
    The key a run is stored under is bound to what was submitted (``key``: the uuid plus a digest of
    the pipeline and its input), so going back, editing the goal and starting again is a new run.
    """

    pipeline = forms.ChoiceField(choices=PIPELINE_CHOICES, initial="reflection")
    goal = forms.CharField(
        label="Goal", required=False, strip=True, max_length=GOAL_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=f"What the pipeline should write (at most {GOAL_MAX_CHARS} characters).",
        error_messages={"null_characters_not_allowed": _NUL_MESSAGE % "goal"},
    )
    ticket = forms.CharField(
        label="Ticket text", required=False, strip=True, max_length=TICKET_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 5, "placeholder": "Paste the customer's ticket here."}),
        help_text=f"The support ticket to route (at most {TICKET_MAX_CHARS} characters).",
        error_messages={"null_characters_not_allowed": _NUL_MESSAGE % "ticket text"},
    )
    idempotency_key = forms.UUIDField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, incident=None, pipeline: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.incident = incident
        if not self.is_bound:
            chosen = pipeline if pipeline in dict(PIPELINE_CHOICES) else "reflection"
            self.initial.setdefault("pipeline", chosen)
            # The goal's default even under routing, where it travels hidden: switching back shows it.
            # What someone typed (``initial`` from the form they were filling) is never replaced.
            self.initial.setdefault("goal", default_goal("reflection", incident))
            self.initial.setdefault("idempotency_key", uuid.uuid4())

    @property
    def selected_pipeline(self) -> str:
        """The pipeline the form shows fields for: the posted one when bound, else the initial one."""
        value = self["pipeline"].value()
        return value if value in dict(PIPELINE_CHOICES) else "reflection"

    @property
    def is_routing(self) -> bool:
        return self.selected_pipeline == "routing"

    def clean_goal(self) -> str:
        return refuse_control_characters(self.cleaned_data["goal"], "goal")

    def clean_ticket(self) -> str:
        return refuse_control_characters(self.cleaned_data["ticket"], "ticket text")

    def clean(self):
        data = super().clean()
        pipeline = data.get("pipeline")
        # Only the field the chosen pipeline shows counts: an error on the hidden one (left over from
        # switching pipelines) would refuse the form with a message nobody can see.
        unused = "goal" if pipeline == "routing" else "ticket"
        self.errors.pop(unused, None)
        data.pop(unused, None)
        if "idempotency_key" in self.errors:  # a stale or edited page: renew the key, say so
            self.errors.pop("idempotency_key")
            self.data = self.data.copy()
            self.data["idempotency_key"] = str(uuid.uuid4())
            self.add_error(None, "This form is out of date; it has been renewed. Check it and submit again.")
        if pipeline == "routing":
            if "ticket" in data and not data["ticket"]:
                self.add_error("ticket", "Enter the ticket text to route.")
        elif pipeline in TEXT_PIPELINES:
            if "goal" in data and not data["goal"]:
                self.add_error("goal", "Enter a goal: what should the pipeline write?")
            # An incident written before its context was bounded: its context would go to every model call.
            if self.incident is not None and (problem := context_problem(self.incident.context())):
                self.add_error(None, f"{problem} Shorten the incident before starting a run.")
        return data

    @property
    def run_goal(self) -> str:
        """The goal the pipeline receives (for routing, the ticket text is the goal)."""
        data = self.cleaned_data
        return data["ticket"] if data["pipeline"] == "routing" else data["goal"]

    @property
    def key(self) -> str:
        """The rendered form's uuid bound to the submitted payload: ``<uuid>:<digest>``, or "" without one."""
        value = self.cleaned_data.get("idempotency_key")
        if not value:
            return ""
        payload = json.dumps([self.cleaned_data["pipeline"], self.run_goal], ensure_ascii=False)
        return f"{value}:{hashlib.sha256(payload.encode()).hexdigest()[:32]}"


SINCE = {"today": "Today", "24h": "Last 24 hours", "7d": "Last 7 days"}
IN_FLIGHT = IN_FLIGHT_FILTER


class RunFilterForm(forms.Form):
    """The run list's filters (GET); a value that does not validate is ignored and shown as an error."""

    stop_reason = forms.CharField(required=False, max_length=200)
    status = forms.ChoiceField(required=False, choices=[("", "any"), (IN_FLIGHT, "in flight (queued or running)"),
                                                        *Run.Status.choices])
    pipeline = forms.ChoiceField(required=False, choices=[("", "any"), *PIPELINE_CHOICES])
    since = forms.ChoiceField(required=False, choices=[("", "any time"), *SINCE.items()])
    ready = forms.BooleanField(required=False, label="Ready to publish")  # reviewer.outbox.ready

    def clean_stop_reason(self) -> str:
        return refuse_control_characters(self.cleaned_data["stop_reason"].strip(), "stop reason")


class InboxFilterForm(forms.Form):
    """The inbox's filters (GET), refused like the run list's: a NUL in a filter would reach the
    query, which PostgreSQL refuses (a 500), and a value longer than the column matches nothing."""

    pipeline = forms.ChoiceField(required=False, choices=[("", "All pipelines"), *PIPELINE_CHOICES])
    stop_reason = forms.CharField(required=False, max_length=200)  # Escalation.stop_reason's column
    mine = forms.BooleanField(required=False, label="Taken by me")
    snoozed = forms.BooleanField(required=False, label="Snoozed")  # only those a lead said "Not now" to

    def clean_stop_reason(self) -> str:
        return refuse_control_characters(self.cleaned_data["stop_reason"].strip(), "stop reason")


MAX_JSON_DEPTH = 4


# -- deadlines, notification channels and holding statements (admin) ---------------------------------


class NotificationChannelForm(forms.ModelForm):
    """A channel names one of the destinations the operator declared (``OUTBOUND_DESTINATIONS``):
    admins choose among them, never type a URL."""

    destination = forms.ChoiceField(help_text="Declared by the operator in OUTBOUND_DESTINATIONS.")
    events = forms.MultipleChoiceField(choices=NotificationChannel.Event.choices, widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = NotificationChannel
        fields = ["name", "destination", "group", "events", "active"]

    def __init__(self, *args, **kwargs):
        from reviewer.outbox import destinations

        super().__init__(*args, **kwargs)
        names = destinations.names()
        self.fields["destination"].choices = [(name, name) for name in names]
        if not names:
            self.fields["destination"].help_text = ("Nothing is declared: the operator sets OUTBOUND_DESTINATIONS "
                                                    "in the environment of the web process and the workers.")
        if not self.instance.pk and not self.is_bound:
            group = self.initial.get("group") or NotificationChannel.Group.LEADS
            self.initial.setdefault("events", GROUP_EVENTS[group])

    def clean_name(self):
        return refuse_control_characters(self.cleaned_data["name"], "name")


# What each group is told by default: leads that an escalation waits and is nearly due; the second
# group that a deadline passed; ops that a lead approved a text, ready to publish; policy admins that an
# approval rule can no longer be met.
GROUP_EVENTS = {
    NotificationChannel.Group.LEADS: [NotificationChannel.Event.OPENED, NotificationChannel.Event.REMINDER],
    NotificationChannel.Group.SECOND: [NotificationChannel.Event.BREACH],
    NotificationChannel.Group.OPS: [NotificationChannel.Event.APPROVED],
    NotificationChannel.Group.ADMINS: [NotificationChannel.Event.UNMEETABLE],
}


class HoldingStatementForm(forms.ModelForm):
    """Write a holding statement; tick "approve" to approve it, which the patch guard must pass
    against the incident's current facts (the guard's message otherwise)."""

    approve = forms.BooleanField(required=False, help_text="Approve it for one-click publishing on a breach: "
                                                          "checked by the guard against the current facts.")

    class Meta:
        model = HoldingStatement
        fields = ["incident", "text"]

    def clean_text(self):
        return refuse_control_characters(self.cleaned_data["text"], "text")

    def clean(self):
        from reviewer.alerts.deadlines import guard_message, guard_statement

        data = super().clean()
        incident, text = data.get("incident"), data.get("text")
        if data.get("approve") and incident is not None and text:
            check = guard_statement(incident, text)
            if not check["ok"]:
                raise forms.ValidationError(guard_message(check), code="guard")
        return data


NOT_AFFECTED = ""


class PublishForm(forms.Form):
    """What a person approves with the text when publishing it: the public title, the incident's
    state, its impact and each component's status; for a text whose approving lead overrode the
    guard, that they saw those findings; and, when the update is at odds with the incident's severity
    or repeats the last update, that they publish it anyway. The component fields are ``component_<pk>``."""

    title = forms.CharField(label="Public title", max_length=MAX_TITLE_CHARS,
                            help_text="What customers read as the incident's name: never an internal title.",
                            widget=forms.TextInput(attrs={"aria-describedby": "title-help"}))
    state = forms.ChoiceField(label="State", choices=STATES, widget=forms.RadioSelect)
    impact = forms.ChoiceField(label="Impact", required=False,
                               choices=[("", "From the components (the worst status)"), *Impact.choices])
    acknowledge = forms.BooleanField(required=False, label="I have read the findings the lead overrode and publish "
                                                            "this text anyway")
    confirm_impact = forms.BooleanField(required=False, label="Publish it anyway: the impact and the components "
                                                               "are what customers should read")
    confirm_repeat = forms.BooleanField(required=False, label="Publish it anyway: customers should read this again")

    def __init__(self, *args, components=(), overridden=(), incident=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.components = list(components)
        self.overridden = list(overridden)
        choices = [(NOT_AFFECTED, "Not affected"), *ComponentStatus.choices]
        for component in self.components:
            self.fields[f"component_{component.pk}"] = forms.ChoiceField(
                label=component.name, choices=choices, required=False)
        if self.overridden:
            self.fields["acknowledge"].required = True
        if incident is not None and (floor := impact_floor(incident)) != Impact.NONE:
            self.fields["impact"].choices = [
                ("", f"From the components (the worst status), at least {Impact(floor).label} for a "
                     f"{severity_of(incident)} incident"), *Impact.choices]

    def clean_title(self):
        title = self.cleaned_data["title"].strip()
        if problem := not_one_line(title, "public title"):
            raise forms.ValidationError(problem, code="not_one_line")
        return title

    def component_fields(self):
        return [self[f"component_{component.pk}"] for component in self.components]

    def public_fields(self) -> PublicFields:
        data = self.cleaned_data
        components = {c.pk: data[f"component_{c.pk}"] for c in self.components
                      if data.get(f"component_{c.pk}", NOT_AFFECTED) != NOT_AFFECTED}
        confirmed = frozenset(name for name in (CONFIRM_IMPACT, CONFIRM_REPEAT) if data.get(name))
        return PublicFields(title=data["title"], state=data["state"], impact=data["impact"] or None,
                            components=components, acknowledged=bool(data.get("acknowledge")), confirmed=confirmed)

    @classmethod
    def initial_for(cls, incident, text: str = "") -> dict:
        """Prefilled from the incident's last published update (its title), its state, and the
        components the last update affects and the text names, at the status its severity implies
        (``suggested_components``); the impact follows them."""
        last = last_published(incident)
        initial = {"title": last.public_title if last else "", "state": incident.state, "impact": ""}
        initial |= {f"component_{component.pk}": status
                    for component, status in suggested_components(incident, text).items()}
        return initial


# -- the incident page's facts editor --------------------------------------------------------------


class FactForm(forms.Form):
    """One fact on the incident page: its key (the context's name), label, value, unit and whether
    customers may read it. ``original_key`` is the key the row had when the page was drawn ("" for a
    new row): a changed key removes the old fact."""

    original_key = forms.CharField(required=False, widget=forms.HiddenInput)
    key = forms.SlugField(label="Key", max_length=64, required=False)
    label = forms.CharField(label="Label", max_length=100, required=False, strip=True)
    value = forms.CharField(label="Value", required=False, strip=True)
    unit = forms.ChoiceField(label="Unit", choices=list(UNITS.items()), initial="text")
    visibility = forms.ChoiceField(label="Visibility", choices=VISIBILITIES, initial="public")

    def clean_label(self):
        return refuse_control_characters(self.cleaned_data["label"], "label")

    def clean_value(self):
        return refuse_control_characters(self.cleaned_data["value"], "value")

    def clean(self):
        data = super().clean()
        deleted = data.get("DELETE")
        if not deleted and data.get("key") and not data.get("value"):
            self.add_error("value", "Enter a value, or tick “Remove” to remove the fact.")
        if not deleted and data.get("value") and not data.get("key"):
            self.add_error("key", "Enter a key: the name the pipelines read the fact by.")
        return data


class BaseFactFormSet(forms.BaseFormSet):
    def changes(self) -> list[dict]:
        """The facts as ``update_incident(upsert_facts=...)`` takes them: each row in its place, a
        removed fact (ticked, or its key changed) with a ``None`` value; an empty new row is nothing."""
        changes, kept = [], set()
        for position, form in enumerate(self.forms):
            data = form.cleaned_data
            if not data:
                continue
            original, key = data.get("original_key") or "", data.get("key") or ""
            if original and (data.get("DELETE") or key != original):
                changes.append({"key": original, "value": None})
            if key and not data.get("DELETE"):
                kept.add(key)
                changes.append({"key": key, "label": data["label"] or key, "value": data["value"],
                                "unit": data["unit"], "visibility": data["visibility"], "position": position})
        # A key both removed (renamed away) and kept (renamed to) is one fact changed in place.
        return [c for c in changes if c["value"] is not None or c["key"] not in kept]

    def clean(self):
        keys = [form.cleaned_data.get("key") for form in self.forms
                if form.cleaned_data and form.cleaned_data.get("key") and not form.cleaned_data.get("DELETE")]
        if len(keys) != len(set(keys)):
            twice = next(key for key in keys if keys.count(key) > 1)
            raise forms.ValidationError(f"The key “{twice}” is given twice.", code="twice")


FactFormSet = forms.formset_factory(FactForm, formset=BaseFactFormSet, extra=1, can_delete=True, max_num=60,
                                    validate_max=True)


class IncidentEditForm(forms.Form):
    """The incident's state, severity and components on its page, and the version the page showed
    (``version``): saving over a version someone else recorded meanwhile is refused. The components to
    choose from are the status page's, and any the incident names that the status page no longer has
    (so they can be taken off)."""

    state = forms.ChoiceField(label="State", choices=STATES)
    severity = forms.CharField(label="Severity", max_length=8, required=False, strip=True,
                               help_text="P0 to P5; a P0 or P1 is published with at least a major impact.")
    components = forms.MultipleChoiceField(
        label="Affected components", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="The parts of the service customers know by name that this incident affects; publishing an "
                  "update starts from them.")
    version = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, named=(), **kwargs):
        super().__init__(*args, **kwargs)
        names = [*StatusComponent.objects.values_list("name", flat=True)]
        names += [name for name in named if name not in names]
        self.fields["components"].choices = [(name, name) for name in names]

    def clean_severity(self):
        return refuse_control_characters(self.cleaned_data["severity"], "severity").upper()

    @classmethod
    def for_incident(cls, incident, data=None, *, latest=False) -> tuple[IncidentEditForm, BaseFactFormSet]:
        """The forms for ``incident`` (``latest``: its newest version or None, when the caller read it)."""
        latest = incident.latest_version() if latest is False else latest
        form = cls(data, named=incident.components or [], initial={
            "state": incident.state, "severity": incident.severity, "components": list(incident.components or []),
            "version": latest.number if latest else None})
        facts = FactFormSet(data, prefix="fact", initial=[
            {"original_key": f.key, "key": f.key, "label": f.label, "value": f.value, "unit": f.unit,
             "visibility": f.visibility} for f in incident.fact_list()])
        return form, facts


class MaintenanceForm(forms.Form):
    """A scheduled maintenance window (reviewer.outbox.maintenance.schedule): times in UTC."""

    title = forms.CharField(label="Public title", max_length=200)
    components = forms.ModelMultipleChoiceField(label="Components", queryset=StatusComponent.objects.all(),
                                                widget=forms.CheckboxSelectMultiple)
    starts_at = forms.DateTimeField(label="Starts (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    ends_at = forms.DateTimeField(label="Ends (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    text = forms.CharField(label="Text customers read", widget=forms.Textarea(attrs={"rows": 4}), max_length=2000)
    notify_moves = forms.BooleanField(required=False, label="Email subscribers when it starts and ends by itself")


class MaintenanceUpdateForm(forms.Form):
    """An extension or a cancellation of a window, with a text subscribers are sent."""

    text = forms.CharField(label="Text customers read", widget=forms.Textarea(attrs={"rows": 3}), max_length=2000)
    ends_at = forms.DateTimeField(label="New end (UTC), to extend it", required=False,
                                  widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    cancel = forms.BooleanField(required=False, label="Cancel the maintenance")
