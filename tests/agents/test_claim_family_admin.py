"""Claim families are data. The defaults are rows (migration 0006 and install_defaults), an admin
edits a family and tries it on a sample text in its form, the guard reads the edited family, and
every pattern of a family runs on RE2 (a pattern RE2 refuses is refused at save)."""

from __future__ import annotations

import pytest

from agents.core.guard import check_final_answer
from agents.core.policy import DEFAULT_CLAIM_FAMILIES, DEFAULT_REGION_WORDS
from agents.models import PipelinePolicy, PolicyChange, RegionToken, RestrictedClaim
from agents.policy_rows import load_policy
from tests.agents.conftest import admin_url, post_change

pytestmark = pytest.mark.django_db

CONTEXT = {"region": "EU", "incident": {"status": "degraded", "eta_minutes": 40}}


@pytest.fixture(autouse=True)
def named_checks_alone(db):
    """What a family or a region word does on its own: grounding (which stops any phrase the incident does
    not hold, "humming along" included) is switched off here."""
    PipelinePolicy.objects.update(grounding=False)


def answer_check(text: str, context=CONTEXT, pipeline: str = "reflection"):
    policy = load_policy(pipeline)
    return check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars)


def test_the_default_families_and_region_words_are_rows():
    rows = {row.family: row for row in RestrictedClaim.objects.all()}
    assert list(rows) == [f.name for f in DEFAULT_CLAIM_FAMILIES]
    for family in DEFAULT_CLAIM_FAMILIES:
        assert rows[family.name].as_family() == family
    assert rows["time promises"].strict_only and not rows["resolution"].strict_only
    assert RegionToken.objects.get(token="eu").words == ", ".join(DEFAULT_REGION_WORDS["eu"])
    assert load_policy("self_critique").guard.families() == list(DEFAULT_CLAIM_FAMILIES)


def test_the_try_button_shows_what_the_family_matches_and_saves_nothing(admin_client):
    row = RestrictedClaim.objects.get(family="recovered")
    before = (row.paraphrases, PolicyChange.objects.count())
    sample = "Checkout is back to normal. Card payments are not back to normal yet. <b>bold</b>"

    response = post_change(admin_client, "restrictedclaim", row, sample_text=sample, _try="Try on sample text")

    assert response.status_code == 200  # the form comes back
    page = response.content.decode()
    assert "Trial only, nothing saved." in page
    assert "“back to normal” (a claim: stopped unless the context supports it" in page
    assert "“back to normal” (hedged, passes" in page
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page  # the sample is escaped
    row.refresh_from_db()
    assert (row.paraphrases, PolicyChange.objects.count()) == before


def test_the_try_button_tells_an_estimated_time_from_a_hedged_one(admin_client):
    row = RestrictedClaim.objects.get(family="time commitments")
    sample = "We expect sign-in to work again within the hour. It should clear shortly. A fix lands later today."

    page = post_change(admin_client, "restrictedclaim", row, sample_text=sample,
                       _try="Try on sample text").content.decode()

    assert "“within the hour” (an estimate: passes only where the incident gives a time for the fix" in page
    assert "“shortly” (hedged, passes" in page
    assert "“later today” (a claim: stopped unless the context supports it" in page


def test_a_paraphrase_added_in_admin_is_read_by_the_guard_with_the_same_hedges(admin_client):
    text = "Card payments are humming along."
    assert answer_check(text).ok
    row = RestrictedClaim.objects.get(family="recovery")

    response = post_change(admin_client, "restrictedclaim", row,
                           paraphrases=row.paraphrases + "\n\\bhumming\\s+along\\b", sample_text=text)

    assert response.status_code == 302
    result = answer_check(text)
    assert result.stop_reason == "invalid_answer:restricted_claims"
    assert "“recovery” family" in result.violations[0]["message"] and result.violations[0]["found"] == "humming along"
    assert answer_check("Card payments are not humming along yet.").ok
    assert PolicyChange.objects.filter(object_id=str(row.pk)).exists()  # the edit is on record
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("On the sample text: “humming along”" in m for m in messages)


@pytest.mark.parametrize(("paraphrases", "problem"), [
    ("\\bfixed\\b\n(?<!not )fine", "Line 2: This pattern cannot be used: it uses a negative lookbehind"),
    ("(a+)+\\1", "a backreference"),
    ("", None),
])
def test_each_paraphrase_line_must_compile_on_re2(admin_client, paraphrases, problem):
    row = RestrictedClaim.objects.get(family="resolution")
    response = post_change(admin_client, "restrictedclaim", row, paraphrases=paraphrases)
    if problem is None:
        assert response.status_code == 302
        return
    assert response.status_code == 200 and problem in response.content.decode()
    row.refresh_from_db()
    assert "fine" not in row.paraphrases


def test_hedges_and_region_words_are_checked_on_save(admin_client):
    row = RestrictedClaim.objects.get(family="time promises")
    response = post_change(admin_client, "restrictedclaim", row, hedges="about, two words")
    assert response.status_code == 200 and "Hedges are single words" in response.content.decode()

    eu = RegionToken.objects.get(token="eu")
    response = post_change(admin_client, "regiontoken", eu, words="Europe, Eur<script>")
    assert response.status_code == 200 and "Region words are letters" in response.content.decode()


def test_a_region_word_added_in_admin_counts_as_the_region(admin_client):
    text = "Nordic card payments are slow."
    assert answer_check(text).ok
    eu = RegionToken.objects.get(token="emea")
    assert post_change(admin_client, "regiontoken", eu, words=eu.words + ", Nordic").status_code == 302
    result = answer_check(text)
    assert (result.stop_reason, result.violations[0]["found"]) == ("invalid_answer:new_region", "Nordic")


def test_the_add_form_has_the_sample_field_and_the_try_button(admin_client):
    response = admin_client.get(admin_url("restrictedclaim", "add"))
    page = response.content.decode()
    assert 'name="sample_text"' in page and 'name="_try"' in page
    assert "Try it on sample text" in page


@pytest.mark.django_db(transaction=True)
def test_migration_0006_gives_an_existing_store_the_families_and_brings_back_no_deleted_claim():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([("agents", "0006_model_call_limits")])
    old = executor.loader.project_state([("agents", "0006_model_call_limits")]).apps
    Claim = old.get_model("agents", "RestrictedClaim")
    contract = [r"\bresolved\b", r"\bfully\s+recovered\b", r"\bincident\s+closed\b",
                r"\ball\s+payments\s+(?:are|is)\s+stable\b"]
    # A store as it was before claim families: the four contract patterns, one deleted by an admin.
    Claim.objects.exclude(pattern__in=contract).delete()
    Claim.objects.filter(pattern=r"\bincident\s+closed\b").delete()

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = {row.family: row for row in RestrictedClaim.objects.all()}
    new_kinds = [f.name for f in DEFAULT_CLAIM_FAMILIES if f.check != "restricted_claims"]
    # "recovered" came out of "recovery" later (migration 0023): it is new, not brought back.
    assert sorted(rows) == sorted(["resolution", "recovery", "recovered", "stability", "guarantees",
                                   "absolute assurances", "time promises", *new_kinds])
    assert (rows["working again"].kind, rows["working again"].support) == ("state_claim", "recovering")
    assert rows["resolution"].support == "resolved" and rows["credits and refunds"].hedging == "negation"
    assert "fixed|solved" in rows["fix in place"].paraphrases and "fixed" not in rows["resolution"].paraphrases
    assert rows["time promises"].strict_only
    assert RegionToken.objects.get(token="apac").words.startswith("Asia-Pacific")
