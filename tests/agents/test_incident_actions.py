"""update_incident, the one action for a change to an incident: fields and facts checked before
anything is written, only changed rows written, a new version only when something changed, the
incident's row locked while it changes; and the admin, which saves through it."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse

from agents import incidents as actions
from agents.incidents import FactInvalid, IncidentExists, update_incident
from agents.models import Incident, IncidentFact, IncidentVersion
from tests.concurrency import at_once
from tests.factories import make_incident

pytestmark = pytest.mark.django_db

ETA = {"key": "eta_minutes", "label": "ETA", "value": "45", "unit": "minutes"}
RATE = {"key": "failed_payment_rate", "label": "Failed payment rate", "value": 0.034, "unit": "ratio"}


def facts_of(incident_id: str) -> list[tuple]:
    return list(IncidentFact.objects.filter(incident__incident_id=incident_id)
                .values_list("key", "label", "value", "unit", "position"))


def numbers(incident_id: str) -> list[int]:
    return list(IncidentVersion.objects.filter(incident__incident_id=incident_id).order_by("number")
                .values_list("number", flat=True))


@pytest.fixture
def pay(users):
    """inc_pay, created by ops through the action: version 1 holds its two facts."""
    return update_incident("inc_pay", user=users.ops, title="Payments degraded", severity="P1", status="degraded",
                           regions=["US"], facts=[ETA, RATE]).incident


# ---------------------------------------------------------------- creating and changing


def test_a_new_incident_is_created_with_its_facts_and_version_one_by_its_author(users):
    incident, created, version = update_incident("inc_new", user=users.ops, title="Checkout errors",
                                                 status="degraded", facts=[ETA, RATE])

    assert created and Incident.objects.get(incident_id="inc_new").title == "Checkout errors"
    assert facts_of("inc_new") == [("eta_minutes", "ETA", "45", "minutes", 0),
                                   ("failed_payment_rate", "Failed payment rate", "0.034", "ratio", 1)]
    assert (version.number, version.created_by, version.changes) == (1, users.ops, [])
    assert version.snapshot["facts"][1]["value"] == 0.034
    assert incident.context()["incident"]["eta_minutes"] == 45


def test_the_same_change_again_writes_nothing_and_keeps_the_version(pay, users):
    updated_at = pay.updated_at

    incident, created, version = update_incident("inc_pay", user=users.admin, title="Payments degraded",
                                                 status="degraded", facts=[ETA, RATE])

    assert not created and version.number == 1 and numbers("inc_pay") == [1]
    assert Incident.objects.get(pk=pay.pk).updated_at == updated_at  # the row was not even saved


def test_a_changed_field_records_a_new_version_saying_what_changed(pay, users):
    _, created, version = update_incident("inc_pay", user=users.admin, status="mitigated")

    assert not created and (version.number, version.created_by) == (2, users.admin)
    assert version.changes == [{"what": "Status", "before": "degraded", "after": "mitigated"}]
    assert facts_of("inc_pay")[0][:3] == ("eta_minutes", "ETA", "45")  # facts not given stay


def test_upserted_facts_change_add_and_remove_by_key_and_leave_the_others(pay, users):
    eta = IncidentFact.objects.get(incident=pay, key="eta_minutes")

    _, _, version = update_incident("inc_pay", user=users.ops, upsert_facts=[
        {"key": "eta_minutes", "value": 30},
        {"key": "failed_payment_rate", "value": None},
        {"key": "regions_note", "value": "EU only"},
    ])

    assert facts_of("inc_pay") == [("eta_minutes", "ETA", "30", "minutes", 0),
                                   ("regions_note", "regions_note", "EU only", "text", 4)]
    assert IncidentFact.objects.get(incident=pay, key="eta_minutes").pk == eta.pk  # changed in place
    assert version.number == 2
    assert version.changes == [
        {"what": "ETA", "before": "45 minutes", "after": "30 minutes"},
        {"what": "Failed payment rate", "before": "3.4%", "after": None},
        {"what": "regions_note", "before": None, "after": "EU only"},
    ]


def test_a_whole_set_of_facts_replaces_them_keeping_the_rows_it_names(pay, users):
    eta = IncidentFact.objects.get(incident=pay, key="eta_minutes")

    update_incident("inc_pay", user=users.ops, facts=[{**ETA, "value": "20", "position": 3}])

    assert facts_of("inc_pay") == [("eta_minutes", "ETA", "20", "minutes", 3)]
    assert IncidentFact.objects.get(incident=pay).pk == eta.pk
    assert numbers("inc_pay") == [1, 2]


def test_removing_a_fact_that_is_not_there_changes_nothing(pay, users):
    _, _, version = update_incident("inc_pay", user=users.ops, upsert_facts=[{"key": "nothing", "value": None}])

    assert version.number == 1 and len(facts_of("inc_pay")) == 2


def test_the_incident_id_as_a_field_renames_the_incident(pay, users):
    incident, created, _ = update_incident(pay, user=users.admin, incident_id="inc_pay_renamed")

    assert not created and incident.pk == pay.pk
    assert list(Incident.objects.values_list("incident_id", flat=True)) == ["inc_pay_renamed"]


def test_a_rename_onto_another_incident_is_refused(pay, users):
    make_incident("inc_other")

    with pytest.raises(ValidationError) as refused:
        update_incident(pay, user=users.admin, incident_id="inc_other")

    assert "incident_id" in refused.value.message_dict
    assert Incident.objects.get(pk=pay.pk).incident_id == "inc_pay"


# ---------------------------------------------------------------- refused, and nothing written


def test_a_fact_its_unit_refuses_writes_nothing_at_all(pay, users):
    with pytest.raises(FactInvalid) as refused:
        update_incident("inc_pay", user=users.ops, title="New title",
                        upsert_facts=[{"key": "chargeback_alerts", "value": "12", "unit": "count"},
                                      {"key": "eta_minutes", "value": "soon"}])

    assert refused.value.key == "eta_minutes"
    assert "is not a number" in refused.value.message_dict["value"][0]
    assert Incident.objects.get(pk=pay.pk).title == "Payments degraded"
    assert [fact[0] for fact in facts_of("inc_pay")] == ["eta_minutes", "failed_payment_rate"]
    assert numbers("inc_pay") == [1]


@pytest.mark.parametrize("fact, field", [
    ({"key": "title", "value": "x"}, "key"),  # the incident's identity, not a fact
    ({"key": "not a slug", "value": "x"}, "key"),
    ({"key": "note", "value": "bell \x07 here"}, "value"),
    ({"key": "note", "value": "x", "unit": "parsecs"}, "unit"),
    ({"key": "note", "value": "x" * 10_000}, "value"),
])
def test_a_fact_the_model_refuses_is_refused_by_key_and_field(pay, users, fact, field):
    with pytest.raises(FactInvalid) as refused:
        update_incident("inc_pay", user=users.ops, upsert_facts=[fact])

    assert refused.value.key == fact["key"] and field in refused.value.message_dict
    assert len(facts_of("inc_pay")) == 2


def test_a_key_given_twice_is_refused(pay, users):
    with pytest.raises(FactInvalid, match="given twice"):
        update_incident("inc_pay", user=users.ops, facts=[ETA, {**ETA, "value": "5"}])

    assert facts_of("inc_pay")[0][2] == "45"


def test_a_fact_without_a_value_in_a_whole_set_is_refused(pay, users):
    with pytest.raises(FactInvalid, match="needs a value"):
        update_incident("inc_pay", user=users.ops, facts=[{"key": "eta_minutes", "value": None}])


def test_fields_the_incident_refuses_create_nothing(users):
    with pytest.raises(ValidationError) as refused:
        update_incident("not a slug!", user=users.ops, title="", facts=[ETA])

    assert {"incident_id", "title"} <= set(refused.value.message_dict)
    assert not Incident.objects.exists() and not IncidentFact.objects.exists()


@pytest.mark.parametrize(("title", "message"), [
    ("Payments\r\nBcc: everyone@example.com", "a line break (U+000D)"),
    ("Payments\ndegraded", "a line break (U+000A)"),
    ("Payments\u2028degraded", "a line break (U+2028)"),
    ("Payments\tdegraded", "a tab (U+0009)"),
])
def test_a_title_of_more_than_one_line_is_refused_with_what_it_holds(pay, users, title, message):
    with pytest.raises(ValidationError) as refused:
        update_incident(pay, user=users.ops, title=title)
    assert refused.value.message_dict == {"title": [f"The title must be one line: it contains {message}; "
                                                    "remove it."]}
    assert Incident.objects.get(pk=pay.pk).title == "Payments degraded"


def test_create_false_refuses_a_missing_incident_and_update_false_an_existing_one(pay, users):
    with pytest.raises(Incident.DoesNotExist):
        update_incident("inc_missing", user=users.ops, create=False, title="Missing")
    with pytest.raises(IncidentExists):
        update_incident("inc_pay", user=users.ops, update=False, title="Another")

    assert list(Incident.objects.values_list("title", flat=True)) == ["Payments degraded"]


def test_an_incident_created_meanwhile_is_refused_and_the_transaction_goes_on(pay, users, monkeypatch):
    # As if another request created inc_pay between the lookup and the insert.
    monkeypatch.setattr(actions, "_find_and_lock", lambda incident: None)

    with transaction.atomic():
        with pytest.raises(IncidentExists, match="created meanwhile"):
            update_incident("inc_pay", user=users.ops, title="Second")
        assert Incident.objects.count() == 1  # the caller's transaction is still usable


@pytest.mark.parametrize("call, message", [
    (lambda: update_incident("inc_pay", colour="red"), "colour"),
    (lambda: update_incident("inc_pay", facts=[], upsert_facts=[]), "not both"),
    (lambda: update_incident("inc_pay", create=False, update=False), "could do nothing"),
    (lambda: update_incident("inc_pay", facts=[{"key": "a", "value": "b", "colour": "red"}]), "colour"),
])
def test_a_call_that_cannot_mean_anything_is_a_type_error(pay, call, message):
    with pytest.raises(TypeError, match=message):
        call()


# ---------------------------------------------------------------- the callers' data


def test_api_shaped_facts_keep_their_numbers_as_the_api_sent_them(users):
    update_incident("inc_api", user=users.ops, title="API", upsert_facts=[
        {"key": "requests_failing_pct", "label": "Requests failing", "value": 12, "unit": "%"},
        {"key": "failed_payment_rate", "label": None, "value": 0.034, "unit": "ratio"},
    ])

    assert [(k, v) for k, _, v, _, _ in facts_of("inc_api")] == [("requests_failing_pct", "12"),
                                                                ("failed_payment_rate", "0.034")]
    assert Incident.objects.get().context()["incident"] == {
        "incident_id": "inc_api", "title": "API", "state": "investigating", "requests_failing_pct": 12,
        "failed_payment_rate": 0.034}


# ---------------------------------------------------------------- the admin saves through it


def admin_form(incident: Incident, facts: list[dict], **fields) -> dict:
    """The incident admin's change (or add) form: the incident's fields, and ``facts`` in the
    inline (a fact with an ``id`` is a row the page showed; ``DELETE`` ticks its box)."""
    initial = sum(1 for fact in facts if "id" in fact)
    data = {"incident_id": incident.incident_id, "title": incident.title, "severity": incident.severity,
            "state": incident.state, "status": incident.status, "report_date": incident.report_date.isoformat(),
            "regions": '["US"]', "policy_hints": "{}", "approved_actions": "[]", "key_messages": "[]",
            "fact_rows-TOTAL_FORMS": str(len(facts)), "fact_rows-INITIAL_FORMS": str(initial),
            "fact_rows-MIN_NUM_FORMS": "0", "fact_rows-MAX_NUM_FORMS": "1000", "_save": "Save", **fields}
    for i, fact in enumerate(facts):
        data.update({f"fact_rows-{i}-{name}": str(value) for name, value in {"visibility": "public", **fact}.items()})
        if incident.pk:
            data[f"fact_rows-{i}-incident"] = str(incident.pk)
    return data


def shown(incident: Incident) -> list[dict]:
    return [{"id": f.pk, "position": f.position, "key": f.key, "label": f.label, "value": f.value, "unit": f.unit}
            for f in incident.fact_list()]


def test_an_incident_added_in_admin_is_created_with_its_facts_and_version_one(users, client):
    client.force_login(users.admin)

    response = client.post(reverse("admin:agents_incident_add"), admin_form(
        Incident(incident_id="inc_added", title="Added in admin", severity="P2", status="degraded"),
        [{"position": 0, "key": "eta_minutes", "label": "ETA", "value": "60", "unit": "minutes"}]))

    assert response.status_code == 302
    incident = Incident.objects.get(incident_id="inc_added")
    assert response.url == reverse("admin:agents_incident_changelist")
    assert facts_of("inc_added") == [("eta_minutes", "ETA", "60", "minutes", 0)]
    version = incident.latest_version()
    assert (version.number, version.created_by) == (1, users.admin)
    assert incident.regions == ["US"]


def test_a_new_incidents_lists_and_hints_start_empty_in_admin_not_null(users, client):
    client.force_login(users.admin)
    form = client.get(reverse("admin:agents_incident_add")).context["adminform"].form
    shown = {name: form[name].value() for name in ("regions", "policy_hints", "approved_actions", "key_messages")}
    assert shown == {"regions": "[]", "policy_hints": "{}", "approved_actions": "[]", "key_messages": "[]"}


def test_admin_refuses_a_title_with_a_line_break_at_the_field(pay, users, client):
    client.force_login(users.admin)
    response = client.post(reverse("admin:agents_incident_change", args=[pay.pk]),
                           admin_form(pay, shown(pay), title="Payments\r\nBcc: everyone@example.com"))
    assert response.status_code == 200  # the form again, with the error at the title
    assert response.context["adminform"].form.errors["title"] == [
        "The title must be one line: it contains a line break (U+000D); remove it."]
    assert Incident.objects.get(pk=pay.pk).title == "Payments degraded"


def test_an_admin_change_deletes_and_renames_rows_keeps_facts_added_meanwhile_and_logs_it(pay, users, client):
    from django.contrib.admin.models import LogEntry

    rows = shown(pay)
    # Someone adds a fact after the admin opened the page: the page never showed it.
    update_incident("inc_pay", user=users.ops, upsert_facts=[{"key": "chargeback_alerts", "value": "3",
                                                              "unit": "count"}])
    client.force_login(users.admin)
    rows[0] = {**rows[0], "key": "eta_minutes_total"}  # renamed
    rows[1] = {**rows[1], "DELETE": "on"}

    response = client.post(reverse("admin:agents_incident_change", args=[pay.pk]), admin_form(pay, rows))

    assert response.status_code == 302
    assert [fact[0] for fact in facts_of("inc_pay")] == ["eta_minutes_total", "chargeback_alerts"]
    latest = pay.latest_version()
    assert (latest.number, latest.created_by) == (3, users.admin)
    entry = LogEntry.objects.get(object_id=str(pay.pk))
    assert "Deleted incident fact" in entry.get_change_message()


def test_an_admin_save_that_changes_nothing_records_no_version(pay, users, client):
    client.force_login(users.admin)

    response = client.post(reverse("admin:agents_incident_change", args=[pay.pk]), admin_form(pay, shown(pay)))

    assert response.status_code == 302 and numbers("inc_pay") == [1]


# ---------------------------------------------------------------- under real concurrency (PostgreSQL)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_changes_at_once_wait_for_the_lock_so_none_is_lost(postgres):
    update_incident("inc_race", title="Race", status="degraded", facts=[ETA])
    # Each change sets one field or adds the same fact; without the lock each would write back the
    # row it read before the others (undoing their fields), and the same new fact would collide.
    changes = [{"title": "Payments degraded"}, {"severity": "P1"}, {"status": "mitigated"}, {"regions": ["EU"]},
               *[{"upsert_facts": [{"key": "shared_note", "value": "same"}]}] * 4]

    answers = at_once(lambda i: update_incident("inc_race", **changes[i]).version.number, len(changes), within=30)

    assert all(isinstance(answer, int) for answer in answers), answers
    incident = Incident.objects.get(incident_id="inc_race")
    assert (incident.title, incident.severity, incident.status, incident.regions) == (
        "Payments degraded", "P1", "mitigated", ["EU"])
    assert [fact[0] for fact in facts_of("inc_race")] == ["eta_minutes", "shared_note"]
    assert numbers("inc_race") == list(range(1, 7))  # then four fields and one fact: a version each


# ---------------------------------------------------------------- the bounds of its context


def test_a_list_entry_over_its_bound_is_refused_by_the_model_and_nothing_is_written(pay, users):
    with pytest.raises(ValidationError) as refused:
        update_incident("inc_pay", user=users.ops, key_messages=["ok", "x" * 501])

    assert refused.value.message_dict == {
        "key_messages": ["“key_messages”: entry 2 has 501 characters; an entry holds at most 500."]}
    assert Incident.objects.get(incident_id="inc_pay").key_messages == []


def test_facts_that_take_the_context_over_64_kb_are_refused_and_nothing_is_written(pay, users):
    many = [{"key": f"fact_{i}", "label": "L" * 100, "value": "v" * 200} for i in range(50)]
    hints = {f"hint_{i}": "h" * 400 for i in range(120)}

    with pytest.raises(ValidationError) as refused:
        update_incident("inc_pay", user=users.ops, policy_hints=hints, upsert_facts=many)

    assert "an incident context holds at most 65,536 bytes (64 KB)" in refused.value.messages[0]
    assert len(facts_of("inc_pay")) == 2 and numbers("inc_pay") == [1]


def test_facts_in_admin_that_take_the_context_over_64_kb_are_refused_on_the_page(pay, users, client):
    client.force_login(users.admin)
    hints = json.dumps({f"hint_{i}": "h" * 400 for i in range(120)})  # 50 KB: within the bound alone
    rows = shown(pay) + [{"position": i + 2, "key": f"fact_{i}", "label": "L" * 100, "value": "v" * 200,
                          "unit": "text"} for i in range(48)]

    response = client.post(reverse("admin:agents_incident_change", args=[pay.pk]),
                           admin_form(pay, rows, policy_hints=hints))

    assert response.status_code == 200
    assert "an incident context holds at most 65,536 bytes (64 KB)." in response.content.decode()
    assert len(facts_of("inc_pay")) == 2 and numbers("inc_pay") == [1]
