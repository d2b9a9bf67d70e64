"""The grounding switch and vocabulary as policy rows: on by default, the vocabulary in the store, a
policy checks what its rows say, and a policy switched off leaves the text to the named checks."""

import pytest
from django.core.exceptions import ValidationError

from agents.core.guard import check_final_answer
from agents.core.policy import (
    DEFAULT_CLAIM_FAMILIES,
    DEFAULT_VOCABULARY,
    FINAL_UPDATE,
    FIX_APPLIED,
    FREE_THINGS,
    NO_CHARGE,
    SAME_DAY,
    SORTED,
    THIS_CLOSED,
)
from agents.models import GroundingTerm, PipelinePolicy, RestrictedClaim
from agents.policy_rows import load_policy

pytestmark = pytest.mark.django_db

CONTEXT = {"region": "US", "incident": {"incident_id": "inc_pay_1", "title": "Card payments failing",
                                         "state": "investigating", "status": "degraded"}}
FIX_WORDS = r"\b(?:fixed|solved|remedied|rectified)\b"
SHOULD_LINES = [p for f in DEFAULT_CLAIM_FAMILIES if f.name == "working again" for p in f.paraphrases
                if p.startswith(r"\bshould\s+")]
TONIGHT_LINES = [p for f in DEFAULT_CLAIM_FAMILIES if f.name == "time commitments" for p in f.paraphrases
                 if "tonight|tomorrow" in p and "live|" in p]
REFUND_SUPPORT = [p for f in DEFAULT_CLAIM_FAMILIES if f.name == "credits and refunds" for p in f.supported_by]
TEXT = "We are investigating card payments failing in the US. We will host a webinar about it."


def final(policy):
    return check_final_answer(TEXT, CONTEXT, policy.guard, max_answer_chars=policy.max_answer_chars)


def test_the_store_holds_the_first_terms_and_grounding_is_on_by_default():
    assert set(GroundingTerm.objects.values_list("text", "advice", "action")) == set(DEFAULT_VOCABULARY)
    assert PipelinePolicy.objects.filter(active=True).exclude(grounding=True).count() == 0
    policy = load_policy("self_critique")
    assert len(policy.guard.vocabulary) == len(DEFAULT_VOCABULARY)
    result = final(policy)
    assert result.stop_reason == "invalid_answer:unsupported_statement"
    assert result.violations[0]["found"] == "host a webinar"


def test_a_policy_switched_off_leaves_the_text_to_the_named_checks():
    PipelinePolicy.objects.filter(pipeline="self_critique", active=True).update(grounding=False)
    policy = load_policy("self_critique")
    assert policy.guard.vocabulary is None
    assert final(policy).ok


def test_a_policy_reads_the_enabled_terms():
    # An admin who decides a webinar is ordinary language adds the words, and marks "host" as something the
    # company may say it does; switching a term off removes it.
    GroundingTerm.objects.bulk_create([GroundingTerm(text="host"), GroundingTerm(text="webinar")])
    assert final(load_policy("self_critique")).violations[0]["found"] == "host"
    GroundingTerm.objects.filter(text="host").update(action=True)
    assert final(load_policy("self_critique")).ok
    GroundingTerm.objects.filter(text="webinar").update(enabled=False)
    assert final(load_policy("self_critique")).violations[0]["found"] == "webinar"


@pytest.mark.parametrize("text", ["", "two  sentences. here", "a <b>", "one two three four five six seven eight nine"])
def test_a_term_is_a_word_or_a_short_phrase(text):
    with pytest.raises(ValidationError):
        GroundingTerm(text=text).full_clean()


def test_a_term_is_stored_lower_case_with_single_spaces():
    term = GroundingTerm(text="Back  to Square One")
    term.full_clean()
    assert term.text == "back to square one"


def test_a_term_added_in_admin_is_recorded_in_the_policy_history(admin_client):
    from agents.models import PolicyChange
    from tests.agents.conftest import post_add

    response = post_add(admin_client, "groundingterm", text="Host a Webinar", note="Our customers ask for them.")
    assert response.status_code == 302
    term = GroundingTerm.objects.get(text="host a webinar")  # stored lower-case
    change = PolicyChange.objects.get()
    assert (change.action, change.object_id, change.after["text"]) == ("added", str(term.pk), "host a webinar")


def test_a_term_with_markup_is_refused_with_a_precise_message(admin_client):
    from tests.agents.conftest import post_add

    response = post_add(admin_client, "groundingterm", text="<script>alert(1)</script>")
    assert response.status_code == 200
    assert "A grounding term is one word or a phrase of up to eight words" in response.content.decode()
    assert not GroundingTerm.objects.filter(text__contains="script").exists()


def test_a_new_term_can_be_previewed_in_the_policy_lab_before_it_is_saved(login, demo_data):
    from agents.admin.lab import PreviewAdmin  # noqa: F401  (the admin's preview view)
    from tests.agents.conftest import admin_url, form_data

    PipelinePolicy.objects.filter(pipeline__in=["reflection", "self_critique"]).update(grounding=True)
    client = login("admin")
    data = {**form_data(client.get(admin_url("groundingterm", "add"))), "text": "webinar",
            "_preview": "Preview impact"}
    response = client.post(admin_url("groundingterm", "preview_add"), data)
    assert response.status_code == 200
    assert "runs would change" in response.content.decode() or "stored run" in response.content.decode()
    assert not GroundingTerm.objects.filter(text="webinar").exists()


LIFECYCLE = ("fix under way", "fix in place", "not yet closed", "why unknown")


@pytest.mark.django_db(transaction=True)
def test_migration_0027_grows_a_stored_vocabulary_and_keeps_what_its_admins_decided():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("agents", "0026_cause_families")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    Term = executor.loader.project_state(before).apps.get_model("agents", "GroundingTerm")
    # A store from before: without the newer terms, "record" still on, and an admin's own choices.
    Term.objects.filter(text__in=["recurrence", "in the future", "hang up", "caused"]).delete()
    Term.objects.update_or_create(text="record", defaults={"enabled": True, "advice": False})
    Term.objects.filter(text="reload").update(enabled=False, note="Not on our pages.")
    Term.objects.update_or_create(text="our own word", defaults={"advice": False})

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    terms = {t.text: t for t in GroundingTerm.objects.all()}
    assert {"recurrence", "in the future", "hang up", "caused"} <= set(terms)
    assert terms["hang up"].advice and terms["caused"].advice  # the advice terms may stand in advice
    assert not terms["record"].enabled and "customers' data" in terms["record"].note
    assert not terms["reload"].enabled and terms["reload"].note == "Not on our pages."  # kept off, now advice
    assert terms["our own word"].enabled


@pytest.mark.django_db(transaction=True)
def test_migrations_0029_and_later_add_their_words_and_families_and_keep_what_its_admins_decided():
    # One trip back and forth for 0029 and 0032 to 0056 (and 0054 to 0056 once more): each trip costs half a minute.
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("agents", "0028_incident_components")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    Term = executor.loader.project_state(before).apps.get_model("agents", "GroundingTerm")
    Term.objects.filter(text__in=["choppy", "participants", "start it again", "healthy", "fail over",
                                  "all hands on deck", "utilizing", "rather", "checking", "as normal",
                                  "alerted", "hard", "appropriate", "sort this out", "sizes", "in fact",
                                  "want", "otherwise", "to be safe", "unchanged", "hassle", "feel free",
                                  "get back to you", "hi", "head to", "heads-up", "keep going",
                                  "drop us a line", "hang on to", "the whole time", "a big thank you",
                                  "ask that you", "talk to", "comparing"]).delete()
    Term.objects.filter(text__in=["track", "carry on"]).update(advice=False)
    Term.objects.filter(text="audio").update(enabled=False, note="Not a word we use.")
    Term.objects.filter(text="unfortunately").update(enabled=False, note="Too casual for us.")
    # The words 0032 switches off, as a store from before holds them; and an admin's own words.
    for text in ("automatic", "mostly"):
        Term.objects.update_or_create(text=text, defaults={"enabled": True, "advice": False})
    Term.objects.update_or_create(text="our own word", defaults={"advice": False})
    Term.objects.filter(text="investigating").update(note="Ours.")
    Claim = executor.loader.project_state(before).apps.get_model("agents", "RestrictedClaim")
    assert not Claim.objects.filter(family__in=LIFECYCLE).exists()  # 0033 taken back on the way down
    assert FIX_WORDS in Claim.objects.get(family="resolution").paraphrases.splitlines()  # 0035 taken back
    assert "“fixed”" in Claim.objects.get(family="resolution").note
    Claim.objects.filter(family="cause identified").update(enabled=False)
    # The "should" paraphrases 0037 adds, as a store from before holds the family: without them.
    working = Claim.objects.get(family="working again")
    working.paraphrases = "\n".join(line for line in working.paraphrases.splitlines() if line not in SHOULD_LINES)
    working.save()
    times = Claim.objects.get(family="time commitments")
    times.paraphrases = "\n".join(line for line in times.paraphrases.splitlines() if line not in TONIGHT_LINES)
    times.save()
    refunds = Claim.objects.get(family="credits and refunds")
    refunds.supported_by = ""  # as a store from before 0044 holds it
    refunds.save()

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    terms = {t.text: t for t in GroundingTerm.objects.all()}
    assert {"choppy", "participants", "start it again"} <= set(terms)
    assert terms["start it again"].advice and not terms["choppy"].advice
    assert not terms["audio"].enabled and terms["audio"].note == "Not a word we use."
    # 0032: the new words, the company's ordinary actions marked, six claim words off, an admin's word as it was.
    assert terms["healthy"].enabled and not terms["healthy"].action
    assert terms["fail over"].action and terms["investigating"].action and terms["investigating"].note == "Ours."
    assert not terms["choppy"].action and not terms["our own word"].action and terms["our own word"].enabled
    for text in ("automatic", "mostly"):
        assert not terms[text].enabled and "the incident must say it" in terms[text].note
    # 0033: the lifecycle families join the stored ones; a family an admin switched off stays off.
    families = {c.family: c for c in RestrictedClaim.objects.all()}
    assert set(LIFECYCLE) <= set(families) and all(families[name].enabled for name in LIFECYCLE)
    assert families["fix in place"].kind == "state_claim" and families["fix in place"].support == "fixed"
    assert not families["cause identified"].enabled
    # 0035: "fixed" and its synonyms say a fix is in place, not that the incident is resolved.
    assert FIX_WORDS not in families["resolution"].paraphrases.splitlines()
    assert FIX_WORDS in families["fix in place"].paraphrases.splitlines()
    assert families["fix in place"].note.startswith("“fixed”") and "fixed" not in families["resolution"].note
    # 0034: its plain words join; one an admin had switched off stays off.
    assert terms["all hands on deck"].enabled and terms["utilizing"].enabled and not terms["utilizing"].action
    assert not terms["unfortunately"].enabled and terms["unfortunately"].note == "Too casual for us."
    # 0036: ordinary words join, what a team does while it works marked as the company's action.
    assert terms["rather"].enabled and not terms["rather"].action
    assert terms["checking"].enabled and terms["checking"].action and not terms["checking"].advice
    assert terms["as normal"].advice and terms["track"].advice and terms["track"].action
    # 0038: "alerted" joins as the company's action, "hard" as a plain word; 0039 likewise.
    assert terms["alerted"].action and terms["hard"].enabled and not terms["hard"].action
    assert terms["sort this out"].action and terms["appropriate"].enabled and not terms["appropriate"].action
    # 0037: a recovery softened by "should" joins the "working again" family.
    assert set(SHOULD_LINES) <= set(families["working again"].paraphrases.splitlines())
    # 0040: plain words and phrases join, "catch up" marked as the company's action, "want" as advice.
    assert terms["sizes"].enabled and terms["in fact"].enabled and not terms["in fact"].action
    assert terms["catch up"].action and terms["want"].advice
    # 0041: a fix said to come tonight joins the "time commitments" family.
    assert len(TONIGHT_LINES) == 1 and set(TONIGHT_LINES) <= set(families["time commitments"].paraphrases.splitlines())
    # 0042: plain words and the phrase "to be safe" join, for plain description only.
    assert terms["otherwise"].enabled and not terms["otherwise"].advice and not terms["otherwise"].action
    assert terms["to be safe"].enabled and "safe" not in terms and terms["unchanged"].enabled
    # 0043: plain words and phrases join; "feel free" as advice, "get back to you" and "recommend" as the
    # company's action.
    assert terms["hassle"].enabled and not terms["hassle"].advice and not terms["hassle"].action
    assert terms["feel free"].advice and terms["get back to you"].action
    assert terms["recommend"].action and terms["recommend"].advice
    # 0044: the refund family is supported by the incident's own words for the money.
    assert REFUND_SUPPORT and families["credits and refunds"].supported_by.splitlines() == REFUND_SUPPORT
    # 0045: greetings join as plain words, "head to" and "get" as advice.
    assert terms["hi"].enabled and not terms["hi"].advice and terms["head to"].advice and terms["get"].advice
    # 0046: "heads-up" joins as a plain phrase, "keep going" as advice, "reported" as the company's action.
    assert terms["heads-up"].enabled and terms["keep going"].advice and terms["reported"].action
    # 0047: the goodwill gifts family joins the stored ones.
    assert families["goodwill gifts"].kind == "liability" and families["goodwill gifts"].enabled
    # 0048: "drop us a line" joins as advice.
    assert terms["drop us a line"].advice and terms["heading out"].enabled
    # 0049: "hang on to" joins as advice; "give", held as a plain word, may now advise too.
    assert terms["hang on to"].advice and terms["give"].advice
    # 0052: "the whole time" joins as a plain phrase; "carry on", held as a plain phrase, may now advise too.
    assert terms["the whole time"].enabled and not terms["the whole time"].advice and terms["carry on"].advice
    # 0053: "a big thank you" joins as a plain phrase, "ask that you" as advice and as the company's action.
    assert terms["a big thank you"].enabled and not terms["a big thank you"].advice
    assert terms["ask that you"].advice and terms["ask that you"].action
    # 0055: "talk to" joins as a plain phrase and as advice, "comparing" as the company's action.
    assert terms["talk to"].advice and terms["comparing"].action and not terms["comparing"].advice
    # 0057: "still stands" and "spotted" join as plain phrase and word, "wait" as advice.
    assert terms["still stands"].enabled and not terms["still stands"].advice and terms["spotted"].enabled
    assert terms["wait"].advice and not terms["wait"].action
    # 0058: "hit" and "where the problem lies" join as plain word and phrase, "read more" as advice.
    assert terms["hit"].enabled and not terms["hit"].advice and terms["where the problem lies"].enabled
    assert terms["read more"].advice
    # 0059: "right now" and "held up" join as plain phrases, "grab" as advice.
    assert terms["right now"].enabled and not terms["held up"].advice and terms["grab"].advice
    # 0061: "it's sorted" and "residents" join as plain phrase and word.
    assert terms["it's sorted"].enabled and not terms["it's sorted"].advice and terms["residents"].enabled
    # 0062: "exactly as" joins as a plain phrase, "go by" and "ring" as advice.
    assert terms["exactly as"].enabled and not terms["exactly as"].advice
    assert terms["go by"].advice and terms["ring"].advice
    # 0063: "behind the scenes" and "sometimes" join as plain phrase and word.
    assert terms["behind the scenes"].enabled and not terms["behind the scenes"].advice and terms["sometimes"].enabled
    # 0064: "as we go" and "we're satisfied" join as plain phrases and as the company's action.
    assert terms["as we go"].action and not terms["as we go"].advice and terms["we're satisfied"].action
    # 0066: "a batch of" and "fault" join as plain phrase and word ("fault" also as the company's action);
    # "look over" and "inbox" join as advice too; "right now", held as a plain phrase, still is no advice.
    assert terms["a batch of"].enabled and not terms["a batch of"].advice and terms["fault"].action
    assert terms["look over"].advice and terms["inbox"].advice and not terms["right now"].advice
    # 0067: "keep an eye out" joins as advice, "sort it" as the company's action.
    assert terms["keep an eye out"].advice and terms["sort it"].action
    assert not terms["sort it"].advice
    # 0068: "regardless" and "fine" join as plain words.
    assert terms["regardless"].enabled and not terms["regardless"].advice and terms["fine"].enabled
    # 0069: "put a fix in" joins as the company's action.
    assert terms["put a fix in"].action and not terms["put a fix in"].advice
    # 0070: "take a moment" and "allow a little time" join as plain phrases and as advice.
    assert terms["take a moment"].enabled and terms["take a moment"].advice and terms["allow a little time"].advice
    # 0071: "owners" and "depending on your bank" join as plain word and phrase, "be patient" as advice too.
    assert terms["owners"].enabled and not terms["owners"].advice and terms["depending on your bank"].enabled
    assert terms["be patient"].advice and terms["per cent"].enabled and not terms["per cent"].advice
    # 0054: a free thing is a goodwill gift; 0056: "with no conversion fee" waives a charge; 0060: "this is now
    # closed" claims closure; 0061: "it's sorted" says working again; 0065: "we'll … the same day" commits to a
    # time, "this will be our last update" claims closure. Taken back, the stored families read as before, and again.
    assert FREE_THINGS in families["goodwill gifts"].paraphrases.splitlines()
    assert NO_CHARGE in families["credits and refunds"].paraphrases.splitlines()
    assert THIS_CLOSED in families["closure"].paraphrases.splitlines()
    assert SORTED in families["working again"].paraphrases.splitlines()
    assert SAME_DAY in families["time commitments"].paraphrases.splitlines()
    assert FINAL_UPDATE in families["closure"].paraphrases.splitlines()
    assert FIX_APPLIED in families["fix in place"].paraphrases.splitlines()
    executor = MigrationExecutor(connection)
    executor.migrate([("agents", "0053_readings_of_round_twenty_eight")])
    assert FREE_THINGS not in RestrictedClaim.objects.get(family="goodwill gifts").paraphrases.splitlines()
    assert NO_CHARGE not in RestrictedClaim.objects.get(family="credits and refunds").paraphrases.splitlines()
    assert THIS_CLOSED not in RestrictedClaim.objects.get(family="closure").paraphrases.splitlines()
    assert SORTED not in RestrictedClaim.objects.get(family="working again").paraphrases.splitlines()
    assert SAME_DAY not in RestrictedClaim.objects.get(family="time commitments").paraphrases.splitlines()
    assert FINAL_UPDATE not in RestrictedClaim.objects.get(family="closure").paraphrases.splitlines()
    assert FIX_APPLIED not in RestrictedClaim.objects.get(family="fix in place").paraphrases.splitlines()
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert FREE_THINGS in RestrictedClaim.objects.get(family="goodwill gifts").paraphrases.splitlines()
    assert NO_CHARGE in RestrictedClaim.objects.get(family="credits and refunds").paraphrases.splitlines()
    assert THIS_CLOSED in RestrictedClaim.objects.get(family="closure").paraphrases.splitlines()
    assert SORTED in RestrictedClaim.objects.get(family="working again").paraphrases.splitlines()
    assert SAME_DAY in RestrictedClaim.objects.get(family="time commitments").paraphrases.splitlines()
    assert FINAL_UPDATE in RestrictedClaim.objects.get(family="closure").paraphrases.splitlines()
    assert FIX_APPLIED in RestrictedClaim.objects.get(family="fix in place").paraphrases.splitlines()
