"""Translations from the desk to publication (reviewer/outbox/translations.py, docs/translations.md): a
translation that changes a fact stops and is shown to a person with its findings; approval covers the
set by its hashes; publishing refuses a set that changed since and attaches the translations."""

from __future__ import annotations

import pytest

from agents.testing.scripted_server import status
from reviewer.desk import decisions
from reviewer.models import Decision, Escalation, UpdateTranslation
from reviewer.outbox import translations
from reviewer.outbox.publishing import PublishRefused, publish
from tests.factories import make_escalation, make_incident

TEXT = "Since 14:30 UTC about 2% of card payments in the EU fail. See https://status.example.com/incidents/7."
FRENCH = ("Depuis 14 h 30 UTC, environ 2 % des paiements par carte dans l'UE échouent. "
          "Voir https://status.example.com/incidents/7.")


@pytest.fixture
def escalation(db):
    return make_escalation(incident=make_incident(), text=TEXT)


def post(client, escalation, language, text, title=""):
    return client.post(f"/escalations/{escalation.pk}/translations/{language}/", {"text": text, "title": title},
                       follow=True)


@pytest.mark.parametrize(("changed", "finding"), [
    (FRENCH.replace("14 h 30", "15 h 30"), "The translation says “15 h 30 UTC” where the source says “14:30 UTC”."),
    (FRENCH.replace("environ 2 %", "environ 20 %"), "The translation says “environ 20 %” where the source says "
                                                    "“about 2%”."),
    (FRENCH.replace("incidents/7", "incidents/8"), "The translation says “https://status.example.com/incidents/8” "
                                                   "where the source says “https://status.example.com/incidents/7”."),
])
def test_a_translation_that_changes_a_fact_stops_and_the_desk_shows_why(login, escalation, changed, finding):
    client = login("lead")
    page = post(client, escalation, "fr", changed)
    translation = UpdateTranslation.objects.get(escalation=escalation, language="fr")
    assert [f["message"] for f in translation.findings] == [finding]
    assert translation.written_by.get_username() == "lead"
    html = page.content.decode()
    assert "stopped" in html and finding.replace("“", "&ldquo;")[:20] in html.replace("“", "&ldquo;")
    with pytest.raises(decisions.DecisionInvalid, match="The French translation is stopped"):
        decisions.decide(escalation.pk, translation.written_by, "approve")
    # The person edits it: a faithful edit passes, and the set can be approved.
    post(client, escalation, "fr", FRENCH)
    translation.refresh_from_db()
    assert translation.findings == []
    outcome = decisions.decide(escalation.pk, translation.written_by, "approve")
    assert outcome.won and outcome.decision.translation_hashes == {"en": translations.sha256(TEXT),
                                                                    "fr": translation.sha256}


def test_a_faithful_translation_is_published_with_its_source(login, users, escalation):
    post(login("lead"), escalation, "fr", FRENCH, title="Paiements par carte en échec")
    decisions.decide(escalation.pk, users.lead, "approve")
    escalation = Escalation.objects.get(pk=escalation.pk)
    update = publish(escalation.run.incident, TEXT, actor=users.ops, escalation=escalation)
    [translation] = update.translations.all()
    assert (translation.language, translation.text, translation.title) == ("fr", FRENCH, "Paiements par carte en échec")


def test_publishing_refuses_a_set_that_changed_after_approval(login, users, escalation):
    post(login("lead"), escalation, "fr", FRENCH)
    decisions.decide(escalation.pk, users.lead, "approve")
    with pytest.raises(translations.TranslationRefused, match="decided"):
        translations.save(Escalation.objects.get(pk=escalation.pk), "fr", FRENCH + " Merci.", user=users.lead)
    # An edit behind the desk's back (the admin, the database) changes the hash the approval recorded.
    UpdateTranslation.objects.filter(escalation=escalation).update(text=FRENCH + " Remboursé.",
                                                                    sha256=translations.sha256(FRENCH + " Remboursé."))
    escalation = Escalation.objects.get(pk=escalation.pk)
    with pytest.raises(PublishRefused, match=r"changed since \(fr\)"):
        publish(escalation.run.incident, TEXT, actor=users.ops, escalation=escalation)


def test_a_translation_added_after_approval_is_refused_at_publication(users, escalation):
    decisions.decide(escalation.pk, users.lead, "approve")
    UpdateTranslation.objects.create(escalation=escalation, language="de", text="Etwas anderes.",
                                     sha256=translations.sha256("Etwas anderes."))
    escalation = Escalation.objects.get(pk=escalation.pk)
    with pytest.raises(PublishRefused, match=r"changed since \(de\)"):
        publish(escalation.run.incident, TEXT, actor=users.ops, escalation=escalation)
    assert Decision.objects.get(escalation=escalation).translation_hashes == {"en": translations.sha256(TEXT)}


def test_a_language_the_page_does_not_have_is_refused(users, escalation):
    with pytest.raises(translations.TranslationRefused, match="not one of the status page's languages"):
        translations.save(escalation, "es", "Hola.", user=users.lead)


def test_the_model_drafts_a_translation_as_its_own_gated_step(users, escalation, scripted_tools):
    # A draft that turns about 2% into 20 % is stored stopped, for a person, with its finding.
    scripted_tools.text(FRENCH.replace("environ 2 %", "environ 20 %"))
    drafted = translations.draft(escalation, "fr", scripted_tools.llm)
    assert drafted.stopped and drafted.written_by is None and drafted.author == "the model (test-model)"
    assert [f["message"] for f in drafted.findings] == [
        "The translation says “environ 20 %” where the source says “about 2%”."]
    request = scripted_tools.fake.requests[-1]
    assert TEXT in str(request["messages"]) and "French" in str(request["messages"])
    # A faithful draft passes and can be approved with the text.
    scripted_tools.text(FRENCH)
    assert translations.draft(escalation, "fr", scripted_tools.llm).findings == []
    assert decisions.decide(escalation.pk, users.lead, "approve").won


def test_a_model_that_answers_nothing_usable_leaves_the_translation_to_a_person(escalation, scripted_tools):
    scripted_tools.reply(status(500, {"error": {"message": "down"}}))
    with pytest.raises(translations.TranslationRefused, match="write it yourself"):
        translations.draft(escalation, "fr", scripted_tools.llm)
    assert not UpdateTranslation.objects.exists()


def test_a_title_that_adds_a_claim_stops_the_translation(users, escalation):
    translation = translations.save(escalation, "fr", FRENCH, title="Paiements de nouveau disponibles, remboursés",
                                    user=users.lead)
    assert [f["message"] for f in translation.findings] == [
        "Title: The translation speaks about the incident's state (“de nouveau disponibles”, working again) "
        "where the source makes no such claim.",
        "Title: The translation promises money or admits blame (“remboursés”, credits and refunds) where the "
        "source makes no such claim."]
