"""Publishing an incident update through the outbox (docs/contract.md, 'Publishing and the outbox').

An update reaches customers only by a person's click (``Publish``, ops or lead) or, for a run that
passed every gate, by its pipeline policy's ``auto_publish`` switch; never otherwise. What may be
published is the text a person approved on an escalation, or the answer of a run that ended ``ok``
with no escalation. :func:`publish` writes, in one transaction, the ``PublishedUpdate`` row and one
``Delivery`` (outbox) row per enabled channel; the deliveries are enqueued when the transaction
commits, and the sweep enqueues any whose message was lost (``reviewer.outbox.tasks``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.core.guard import check_final_answer
from agents.core.guard.contacts import carries_contact
from agents.core.inputs import not_one_line
from agents.core.policy import POLICY_CLASSES, GuardRules, TextPolicy
from agents.core.text import canonical_json, normalize, text_hash
from agents.incidents import update_incident
from agents.models import Incident, PipelinePolicy, Run, is_text_pipeline
from agents.models.incidents import STATES
from agents.policy_rows import PolicyMissing, load_policy
from reviewer.celery import enqueue_each_on_commit, enqueue_on_commit
from reviewer.ledger.events import record_publication
from reviewer.models import (
    DEFAULT_TITLE,
    IMPACT_OF_STATUS,
    POSTMORTEM,
    ComponentStatus,
    Delivery,
    DeliveryChannel,
    Escalation,
    Impact,
    PostIncidentReport,
    PublishedUpdate,
    StatusComponent,
    StatusSnapshot,
    Subscriber,
    UpdateComponent,
    worst_status,
)
from reviewer.outbox import translations

PUBLISH_PERMISSION = "reviewer.publish_update"
AUTO_PUBLISH = "auto_publish"
MAX_REASON_CHARS = 200
MAX_TITLE_CHARS = 120
RESOLVED = "resolved"
# A title is a heading, not a sentence: the checks for prose do not apply to it. Nor does grounding: the
# person publishing names the incident in their own words ("Card payments failing"); the named checks
# still hold those words to the facts (a number, a region, a promise, an internal detail).
_NOT_FOR_TITLES = {"invalid_answer:malformed_text", "invalid_answer:uninformative",
                   "invalid_answer:unsupported_statement"}


class PublishRefused(Exception):
    """This text may not be published; the message is for the person who asked."""


# What an update must say when the person publishing it does not confirm otherwise, one switch each
# (``PublicFields.confirmed``; the form's ticks and the API's fields of the same names).
CONFIRM_IMPACT = "confirm_impact"
CONFIRM_REPEAT = "confirm_repeat"


class NeedsConfirmation(PublishRefused):
    """The update is publishable, but says something at odds with the incident (a P1 with every
    component operational) or nothing new: publishing it needs the person's confirmation.
    ``needed`` maps each confirmation switch to what it confirms."""

    def __init__(self, needed: dict[str, list[str]]):
        self.needed = needed
        said = " ".join(message for messages in needed.values() for message in messages)
        switches = " and ".join(f"“{name}”" for name in needed)
        super().__init__(f"{said} Confirm with {switches} to publish it anyway.")


class AlreadyPublished(PublishRefused):
    def __init__(self, update: PublishedUpdate):
        self.update = update
        super().__init__(f"This text is already published as update v{update.version} of {update.incident}.")


@dataclass(frozen=True)
class PublicFields:
    """What the status page shows with an update's text: the public title, the incident's state,
    the impact and each affected component's status. A person publishing approves them with the
    text; None leaves a field to :func:`resolve_fields` (the incident's last update, then defaults)."""

    title: str | None = None
    state: str | None = None
    impact: str | None = None
    components: dict[int, str] | None = None  # StatusComponent pk → ComponentStatus value
    acknowledged: bool = False  # the person saw the findings a lead overrode and publishes anyway
    confirmed: frozenset[str] = frozenset()  # what the person confirmed: CONFIRM_IMPACT, CONFIRM_REPEAT


@dataclass(frozen=True)
class Resolved:
    title: str
    state: str
    impact: str
    components: dict = field(default_factory=dict)  # StatusComponent → status


def resolve_fields(incident: Incident, fields: PublicFields) -> Resolved:
    """Fill what ``fields`` leaves open: the incident's last published update's title, components and
    impact, and the incident's state. A resolved update puts the components it names back to
    operational unless it says otherwise. Raises :class:`PublishRefused` for a value that is not one."""
    last = last_published(incident)
    if fields.title and (problem := not_one_line(fields.title.strip(), "public title")):
        raise PublishRefused(problem)
    title = normalize(fields.title or "") or (last.public_title if last and last.public_title else DEFAULT_TITLE)
    if len(title) > MAX_TITLE_CHARS:
        raise PublishRefused(f"The public title has {len(title)} characters; the limit is {MAX_TITLE_CHARS}.")
    state = fields.state or incident.state
    if state not in dict(STATES) and state != POSTMORTEM:
        raise PublishRefused(f"“{str(state)[:40]}” is not a state; one of: {', '.join(dict(STATES))}.")
    if fields.components is not None:
        known = StatusComponent.objects.in_bulk(list(fields.components))
        missing = sorted(set(fields.components) - set(known))
        if missing:
            raise PublishRefused(f"No component {missing[0]}.")
        wrong = [s for s in fields.components.values() if s not in ComponentStatus.values]
        if wrong:
            raise PublishRefused(f"“{str(wrong[0])[:40]}” is not a component status; one of: "
                                 f"{', '.join(ComponentStatus.values)}.")
        components = {known[pk]: status for pk, status in fields.components.items()}
    else:
        carried = last.component_statuses.select_related("component") if last else []
        components = {row.component: ComponentStatus.OPERATIONAL if state in (RESOLVED, POSTMORTEM) else row.status
                      for row in carried}
    if fields.impact is not None:
        if fields.impact not in Impact.values:
            raise PublishRefused(f"“{str(fields.impact)[:40]}” is not an impact; one of: {', '.join(Impact.values)}.")
        impact = fields.impact
    else:
        # The worst component's, else the last update's; never below what the severity implies.
        worst = worst_status(components.values())
        impact = (IMPACT_OF_STATUS[worst] if worst != ComponentStatus.OPERATIONAL
                  else (last.impact if last else Impact.MINOR))
        if state not in (RESOLVED, POSTMORTEM):
            impact = at_least(impact, impact_floor(incident))
    return Resolved(title=title, state=state, impact=impact, components=components)


# The least impact an unresolved incident of a severity is published with: a P0 or P1 is an outage.
SEVERITY_FLOOR = {"P0": Impact.MAJOR, "P1": Impact.MAJOR}
# The status a component named in the text starts from on the publish form, by severity.
SEVERITY_STATUS = {"P0": ComponentStatus.MAJOR, "P1": ComponentStatus.PARTIAL}


def severity_of(incident: Incident) -> str:
    return (incident.severity or "").strip().upper()


def impact_floor(incident: Incident) -> str:
    """The least impact an update of ``incident`` has while it is not resolved (``Impact.NONE``: any)."""
    return SEVERITY_FLOOR.get(severity_of(incident), Impact.NONE)


def at_least(impact: str, floor: str) -> str:
    order = list(Impact.values)
    return max(impact, floor, key=order.index)


def impact_problems(incident: Incident, resolved: Resolved) -> list[str]:
    """What is at odds between ``resolved`` and the incident's severity: a P0/P1 not resolved with no
    component affected while components are defined (the status page would show every one
    operational), or an impact below the severity's floor. Empty when they agree."""
    floor = impact_floor(incident)
    if floor == Impact.NONE or resolved.state in (RESOLVED, POSTMORTEM):
        return []
    severity = severity_of(incident)
    problems = []
    if (all(status == ComponentStatus.OPERATIONAL for status in resolved.components.values())
            and StatusComponent.objects.exists()):  # with no component defined, the page lists none
        problems.append(f"The incident is {severity}, but the update marks no component as affected: the "
                        "status page would show every component operational.")
    if list(Impact.values).index(resolved.impact) < list(Impact.values).index(floor):
        problems.append(f"The impact “{Impact(resolved.impact).label}” is below what a {severity} incident "
                        f"implies (at least “{Impact(floor).label}”).")
    return problems


def components_named(text: str, components=None) -> list[StatusComponent]:
    """The components whose name the text says (as a whole word, whatever the case)."""
    components = StatusComponent.objects.all() if components is None else components
    folded = normalize(text).casefold()
    return [c for c in components
            if re.search(r"(?<!\w)" + re.escape(normalize(c.name).casefold()) + r"(?!\w)", folded)]


def suggested_components(incident: Incident, text: str) -> dict[StatusComponent, str]:
    """What the publish form starts from: the components the incident's last update affects (as it
    said them; none once it was resolved), and those ops named on the incident and those the text
    names, at the status its severity implies (a P0 a major outage, a P1 a partial one, otherwise
    degraded performance)."""
    last = last_published(incident)
    carried = {} if last is None or last.state == RESOLVED else {
        row.component: row.status for row in last.component_statuses.select_related("component")
        if row.status != ComponentStatus.OPERATIONAL}
    status = SEVERITY_STATUS.get(severity_of(incident), ComponentStatus.DEGRADED)
    named = [*StatusComponent.objects.filter(name__in=incident.components or []), *components_named(text)]
    return carried | {c: status for c in named if c not in carried}


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def sentence_key(sentence: str) -> str:
    """A sentence as compared with another: case, spacing and its closing punctuation aside."""
    return normalize(sentence).casefold().rstrip(".!?…;: ")


def sentences(text: str) -> list[str]:
    return [normalize(part) for part in _SENTENCE_END.split(text.strip()) if sentence_key(part)]


def new_sentences(previous: str, text: str) -> list[str]:
    """The sentences of ``text`` that ``previous`` does not say (compared by :func:`sentence_key`)."""
    said = {sentence_key(sentence) for sentence in sentences(previous)}
    return [sentence for sentence in sentences(text) if sentence_key(sentence) not in said]


def repeat_problems(incident: Incident, text: str) -> list[str]:
    """Empty unless ``text`` says nothing the incident's last update did not say already."""
    last = last_published(incident)
    if last is None or new_sentences(last.text, text):
        return []
    return [f"The text repeats update v{last.version}: it has no new sentence for customers."]


def _guard_policy(incident: Incident, run: Run | None) -> TextPolicy:
    pipeline = run.pipeline if run is not None else "self_critique"
    try:
        policy = load_policy(pipeline)
    except (PolicyMissing, ValueError):
        policy = POLICY_CLASSES[pipeline].from_dict(run.policy or {}) if run is not None else None
    return policy if isinstance(policy, TextPolicy) else None


def public_findings(incident: Incident, text: str, resolved: Resolved, run: Run | None = None) -> list[dict]:
    """The guard's findings on what a person adds to the text when publishing it: the public title
    (every final-answer check but those for prose), and the state, against what the text says of it
    (a text saying payments work again, published as "investigating"). The pipeline's active policy's
    rules apply, the run's snapshot without one."""
    context = dict(run.context or {}) if run is not None and run.context else incident.context()
    # A post-incident report speaks of a resolved incident: the state check reads it so.
    state = RESOLVED if resolved.state == POSTMORTEM else resolved.state
    context["incident"] = {**(context.get("incident") or {}), "state": state}
    policy = _guard_policy(incident, run)
    rules = policy.guard if policy is not None else GuardRules()
    title = check_final_answer(resolved.title, context, rules, max_answer_chars=MAX_TITLE_CHARS)
    findings = [{**v, "field": "title"} for v in title.violations if v["check"] not in _NOT_FOR_TITLES]
    body = check_final_answer(text, context, rules, max_answer_chars=len(text) + 1)
    findings += [{**v, "field": "state"} for v in body.violations
                 if v["check"] == "invalid_answer:state_claim"]
    return findings


def publishable(run: Run) -> tuple[str, Escalation | None]:
    """The text of ``run`` that may be published, and the escalation that approved it (None for a
    run that passed every gate). Raises :class:`PublishRefused` saying why not."""
    if run.incident_id is None:
        raise PublishRefused("Only a run on an incident can be published.")
    if not is_text_pipeline(run.pipeline):
        raise PublishRefused("Only the text pipelines draft customer updates.")
    escalation = run.related("escalation")
    if escalation is not None:
        if escalation.status == Escalation.Status.PENDING:
            raise PublishRefused("This text waits for a support lead's decision; it cannot be published yet.")
        if escalation.status == Escalation.Status.REJECTED:
            raise PublishRefused("A support lead rejected this text; it cannot be published.")
        if not normalize(escalation.final_text):
            raise PublishRefused("The approved text is empty.")
        return escalation.final_text, escalation
    if run.status != Run.Status.OK or not normalize(run.answer):
        raise PublishRefused("Only a run that passed every gate, or a text a lead approved, can be published.")
    return run.answer, None


def offers_publish(run: Run) -> bool:
    """Whether the run page offers "Publish" for a run not yet published: it has a publishable text."""
    if run.in_flight:
        return False
    try:
        publishable(run)
    except PublishRefused:
        return False
    return True


def last_published(incident: Incident) -> PublishedUpdate | None:
    return incident.published_updates.order_by("-version").first()


def publish(incident: Incident, text: str, *, actor, source_run: Run | None = None,
            escalation: Escalation | None = None, reason: str = "",
            fields: PublicFields = PublicFields()) -> PublishedUpdate:
    """Publish ``text`` as the incident's next update and write its outbox rows, in one transaction.

    ``actor`` is the person who clicked (needs ``reviewer.publish_update``), or None for the policy's
    ``auto_publish`` (then ``source_run`` must have passed every gate). With ``source_run`` or
    ``escalation``, ``text`` must be the text that run may publish (:func:`publishable`); without
    either (a holding statement an admin approved), ``reason`` says what it is. ``fields`` are the
    public title, state, impact and components published with it (:func:`resolve_fields`); the guard
    checks them (:func:`public_findings`). A text whose approving lead overrode the guard's findings
    is published by a person who acknowledges them (``fields.acknowledged``), never automatically.
    Raises :class:`PublishRefused` (:class:`AlreadyPublished` for a run published before).
    """
    if actor is not None and not actor.has_perm(PUBLISH_PERMISSION):
        raise PermissionDenied("Only ops staff and support leads can publish updates.")
    source_run, escalation, approved_by = _source(incident, text, actor=actor, source_run=source_run,
                                                  escalation=escalation, reason=reason)
    fields = _report_fields(incident, source_run, escalation, fields)
    overridden = _checked_text(text, actor=actor, escalation=escalation, fields=fields)
    try:  # the translations go with the text, exactly as the approval recorded them
        published_translations = translations.check_set(escalation, text)
    except translations.TranslationRefused as refused:
        raise PublishRefused(str(refused)) from None
    if source_run is not None and (existing := PublishedUpdate.objects.filter(source_run=source_run).first()):
        raise AlreadyPublished(existing)  # a second click says so before anything else (checked again below)
    resolved = _checked_public(incident, text, fields, source_run=source_run, overridden=overridden)
    record = {"overridden": overridden, "justification": escalation.approval.note if overridden else "",
              "acknowledged_by": actor if overridden else None}
    try:
        return _write(incident, text, actor=actor, source_run=source_run, escalation=escalation,
                      approved_by=approved_by, reason=reason.strip()[:MAX_REASON_CHARS],
                      resolved=resolved, record=record, published_translations=published_translations)
    except IntegrityError:
        # Two clicks at once: the unique constraint let one through; say which.
        existing = PublishedUpdate.objects.filter(source_run=source_run).first() if source_run else None
        if existing is None:
            raise
        raise AlreadyPublished(existing) from None


def _source(incident: Incident, text: str, *, actor, source_run: Run | None, escalation: Escalation | None,
            reason: str) -> tuple[Run | None, Escalation | None, str]:
    """Where the text comes from, checked for each caller: a run (a person's click or auto_publish), an
    escalation a lead approved, or a holding statement with a reason. Returns the run, the approving
    escalation (None for a run that passed every gate) and the approving lead's username."""
    if escalation is not None:
        if source_run is not None and source_run.pk != escalation.run_id:
            raise PublishRefused("The escalation is not the run's.")
        source_run = escalation.run
    if source_run is None:
        if actor is None:
            raise PublishRefused("Automatic publishing needs a run that passed every gate.")
        if not reason.strip():
            raise PublishRefused("Publishing a text that no run produced needs a reason (e.g. “holding statement”).")
        return None, escalation, ""
    if source_run.incident_id != incident.pk:
        raise PublishRefused("The run is not on this incident.")
    allowed, approving = publishable(source_run)
    if actor is None and approving is not None:
        raise PublishRefused("Only a run that passed every gate is published automatically.")
    if normalize(text) != normalize(allowed):
        raise PublishRefused("Only the text as approved can be published; edit it through the escalation.")
    approved_by = approving.decided_by.get_username() if approving is not None and approving.decided_by_id else ""
    return source_run, approving, approved_by


def is_report(run: Run | None) -> bool:
    """Whether ``run`` drafted a post-incident report (a :class:`PostIncidentReport` names it)."""
    return run is not None and PostIncidentReport.objects.filter(run=run).exists()


def _report_fields(incident: Incident, source_run: Run | None, escalation: Escalation | None,
                   fields: PublicFields) -> PublicFields:
    """A post-incident report is published as the ``postmortem`` stage, only with a person's approval
    and only after the incident's resolution was published; nothing else is published as that stage."""
    if not is_report(source_run):
        if fields.state == POSTMORTEM:
            raise PublishRefused("Only a post-incident report is published as the post-incident report.")
        return fields
    if escalation is None:
        raise PublishRefused("A post-incident report is published only once a person approved it.")
    last = last_published(incident)
    if last is None or last.state not in (RESOLVED, POSTMORTEM):
        raise PublishRefused("A post-incident report is published after the incident's resolution.")
    return replace(fields, state=POSTMORTEM)


def _checked_text(text: str, *, actor, escalation: Escalation | None, fields: PublicFields) -> list[dict]:
    """Refuses a text that is empty, that only a person may publish, or whose overridden guard findings
    the publisher has not acknowledged; returns those findings ([] for none)."""
    if not normalize(text):
        raise PublishRefused("An empty text cannot be published.")
    if actor is None and carries_contact(text):
        # The final-answer check of an auto-publishing policy stops such a run for a person first;
        # this is the last line, for a text that reached here another way.
        raise PublishRefused("An update with a link, an address, a phone number or a mention is published "
                             "only by a person.")
    overridden = escalation.overridden if escalation is not None else []
    if overridden and not fields.acknowledged:
        raise PublishRefused(f"The approving lead overrode {len(overridden)} guard finding"
                             f"{'s' * (len(overridden) != 1)} on this text: acknowledge them to publish it.")
    return overridden


def _checked_public(incident: Incident, text: str, fields: PublicFields, *, source_run: Run | None,
                    overridden: list[dict]) -> Resolved:
    """The public fields resolved and checked by the guard (findings the lead overrode and the publisher
    acknowledged excepted); raises :class:`NeedsConfirmation` for an impact or a repeat to confirm."""
    resolved = resolve_fields(incident, fields)
    seen = {(v["check"], v["found"].lower()) for v in overridden}
    findings = [f for f in public_findings(incident, text, resolved, run=source_run)
                if (f["check"], (f["found"] or "").lower()) not in seen]  # acknowledged above
    if findings:
        raise PublishRefused(" ".join(f"The {f['field']}: {f['message']}" for f in findings))
    needed = {name: problems for name, problems in ((CONFIRM_IMPACT, impact_problems(incident, resolved)),
                                                    (CONFIRM_REPEAT, repeat_problems(incident, text)))
              if problems and name not in fields.confirmed}
    if needed:
        raise NeedsConfirmation(needed)
    return resolved


def _write(incident, text, *, actor, source_run, escalation, approved_by, reason, resolved, record,
           published_translations=()) -> PublishedUpdate:
    with transaction.atomic():
        # Lock the incident: versions are numbered one after another, and a run is published once.
        Incident.objects.select_for_update().filter(pk=incident.pk).first()
        if source_run is not None:
            existing = PublishedUpdate.objects.filter(source_run=source_run).first()
            if existing is not None:
                raise AlreadyPublished(existing)
        last = last_published(incident)
        update = PublishedUpdate.objects.create(
            incident=incident, version=(last.version + 1) if last else 1, text=text, text_hash=text_hash(text),
            source_run=source_run, escalation=escalation,
            incident_version=(source_run.incident_version if source_run is not None and
                              source_run.incident_version_id else incident.latest_version()),
            approved_by=approved_by, published_by=actor,
            policy_snapshot_id=text_hash(canonical_json(source_run.policy)) if source_run is not None else "",
            reason=reason or (AUTO_PUBLISH if actor is None else ""),
            public_title=resolved.title, state=resolved.state, impact=resolved.impact, **record,
        )
        UpdateComponent.objects.bulk_create(
            UpdateComponent(update=update, component=component, status=status)
            for component, status in resolved.components.items())
        translations.attach(update, published_translations)
        if resolved.state not in (incident.state, POSTMORTEM):
            # What customers were told is where the incident stands: its state follows the update (a
            # version of its own, like any change of the incident), so the guard and the next update read it.
            update_incident(incident, user=actor, create=False, state=resolved.state)
        record_publication(update)
        # robust: the update is published once this commits, whatever the broker does; a delivery
        # not enqueued is sent by the sweep (reviewer.outbox.tasks.sweep_deliveries), and
        # ``update.enqueued`` tells the person that delivery will follow (delivery_note).
        update.enqueued = enqueue_each_on_commit(
            "reviewer.tasks.deliver", [(delivery.pk,) for delivery in _outbox_rows(update)], robust=True)
    return update


DELIVERY_FOLLOWS = ("Delivery will follow: the task queue did not answer just now, and the outbox sends the "
                    "deliveries by itself once it is back.")


def delivery_note(update: PublishedUpdate) -> str:
    """What a person is told after publishing ``update`` when its deliveries could not be enqueued at
    the commit (the broker is down); "" otherwise. The update is published either way."""
    enqueued = getattr(update, "enqueued", None)
    if enqueued is None or not enqueued.failed:
        return ""
    return DELIVERY_FOLLOWS


def _outbox_rows(update: PublishedUpdate) -> list[Delivery]:
    """One outbox row per enabled channel; a subscribers channel has one per active subscriber the
    update concerns (``Subscriber.objects.for_update``), each subscriber once per update."""
    rows, reached = [], set()
    for channel in DeliveryChannel.objects.filter(enabled=True):
        if channel.kind != DeliveryChannel.Kind.SUBSCRIBERS:
            rows.append(Delivery.objects.create(update=update, channel=channel))
            continue
        subscribers = [pk for pk in Subscriber.objects.for_update(update).values_list("pk", flat=True)
                       if pk not in reached]
        reached.update(subscribers)
        rows += Delivery.objects.bulk_create(Delivery(update=update, channel=channel, subscriber_id=pk)
                                             for pk in subscribers)
    return rows


STATUS_PAGE = "Public status page"


def install_default_channel(**kwargs) -> None:
    """The built-in public status page is the embedded default channel, so the demo shows an update
    reaching "customers" with no outside service: created after migrate when no channel exists (an
    admin's own channels, or a deleted status page, are left as they are)."""
    if not DeliveryChannel.objects.exists():
        DeliveryChannel.objects.create(name=STATUS_PAGE, kind=DeliveryChannel.Kind.STATUS)


def auto_publish(sender, *, run, result, **kwargs) -> None:
    """Publish a run that passed every gate when its pipeline's active policy says ``auto_publish``,
    and so did the snapshot it ran under: its final-answer check then refused any link, contact or
    mention (``invalid_answer:auto_publish_contact``, an escalation), so such a text reaches a person.

    Connected to ``agents.signals.run_finished`` (inside the transaction that stores the result), so
    the update and its outbox rows commit with the run, or not at all.
    """
    if run.status != Run.Status.OK or run.incident_id is None or not is_text_pipeline(run.pipeline):
        return
    if not PipelinePolicy.objects.filter(pipeline=run.pipeline, active=True, auto_publish=True).exists():
        return
    if run.related("escalation") is not None or is_report(run):  # these wait for a person
        return
    if not (run.policy or {}).get("auto_publish"):
        # The run was checked under a policy that did not publish by itself, so its answer was not
        # checked for links and contacts as one that will: it waits for a person's click.
        return
    try:
        publish(run.incident, run.answer, actor=None, source_run=run)
    except PublishRefused:
        return  # an empty answer, or published already by a redelivered task


def retry_failed_delivery(delivery: Delivery, user) -> bool:
    """A person's retry of a dead-lettered delivery: a fresh set of attempts; False if it is not failed."""
    return _send_again(delivery, user, Delivery.Status.FAILED)


def send_held_delivery_again(delivery: Delivery, user) -> bool:
    """A person's "send again" of a held delivery, having checked that it did not arrive: a fresh set
    of attempts; False if it is not held."""
    return _send_again(delivery, user, Delivery.Status.HELD)


def _send_again(delivery: Delivery, user, status: str) -> bool:
    won = Delivery.objects.filter(pk=delivery.pk, status=status).update(
        status=Delivery.Status.PENDING, attempts=0, next_attempt_at=timezone.now(), retried_by=user)
    if won:
        enqueue_on_commit("reviewer.tasks.deliver", delivery.pk, robust=True)  # else the sweep sends it
    return bool(won)


def mark_held_delivery_sent(delivery: Delivery, user) -> bool:
    """A person's "mark as sent" of a held delivery that did arrive: delivered, never sent again (its
    last error stays, saying why it was held); False if it is not held."""
    marked = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.HELD).update(
        status=Delivery.Status.DELIVERED, delivered_at=timezone.now(), marked_sent_by=user)
    if marked and delivery.channel.kind == DeliveryChannel.Kind.STATUS:
        StatusSnapshot.objects.outdate()  # the update is public now: the page and its history show it
    return bool(marked)
