"""The invariance check of translations (agents.core.guard.translation, docs/translations.md)."""

from collections import Counter

import pytest

from agents.core.guard.translation import LANGUAGES, check_translation, facts

SOURCE = ("Since 14:30 UTC on 2 December about 2.5% of card payments in the EU fail (INC-2041). We expect a fix "
          "within 30 minutes. Details: https://status.example.com/incidents/2041 or support@example.com. "
          "12,000 payments were retried.")
FAITHFUL = {
    "fr": "Depuis 14 h 30 UTC le 2 décembre, environ 2,5 % des paiements par carte dans l'UE échouent (INC-2041). "
          "Nous prévoyons un correctif dans 30 minutes. Détails : https://status.example.com/incidents/2041 ou "
          "support@example.com. 12 000 paiements ont été relancés.",
    "de": "Seit 14:30 Uhr UTC am 2. Dezember schlagen etwa 2,5 % der Kartenzahlungen in der EU fehl (INC-2041). "
          "Wir erwarten eine Behebung innerhalb von 30 Minuten. Details: https://status.example.com/incidents/2041 "
          "oder support@example.com. 12.000 Zahlungen wurden wiederholt.",
}


@pytest.mark.parametrize("lang", ["fr", "de"])
def test_a_faithful_translation_has_no_finding(lang):
    assert check_translation(SOURCE, FAITHFUL[lang], lang) == []


@pytest.mark.parametrize("lang", ["fr", "de"])
def test_each_language_writes_the_same_facts_its_own_way(lang):
    translated = Counter((f.kind, f.key) for f in facts(FAITHFUL[lang], LANGUAGES[lang]))
    assert translated == Counter((f.kind, f.key) for f in facts(SOURCE, LANGUAGES["en"]))
    assert len(translated) == 9  # url, email, date, time, id, region and three numbers


@pytest.mark.parametrize(("lang", "old", "new", "message"), [
    ("fr", "30 minutes", "45 minutes", "The translation says “45 minutes” where the source says “30 minutes”."),
    ("fr", "14 h 30 UTC", "15 h 30 UTC", "The translation says “15 h 30 UTC” where the source says “14:30 UTC”."),
    ("fr", "incidents/2041", "incidents/2014", "The translation says “https://status.example.com/incidents/2014” "
                                               "where the source says “https://status.example.com/incidents/2041”."),
    ("fr", "environ 2,5 %", "2,5 %", "The translation says “2,5 %” where the source says “about 2.5%”."),
    ("de", "30 Minuten", "30 Stunden", "The translation says “30 Stunden” where the source says “30 minutes”."),
    ("de", "2. Dezember", "3. Dezember", "The translation says “3. Dezember” where the source says “2 December”."),
    ("de", "12.000", "1.200", "The translation says “1.200” where the source says “12,000”."),
    ("de", "(INC-2041)", "(INC-2014)", "The translation says “INC-2014” where the source says “INC-2041”."),
    ("de", "in der EU", "in den USA", "The translation says “USA” where the source says “EU”."),
    ("de", "support@example.com", "hilfe@example.com",
     "The translation says “hilfe@example.com” where the source says “support@example.com”."),
])
def test_a_changed_fact_is_named_with_both_wordings(lang, old, new, message):
    assert old in FAITHFUL[lang]
    findings = check_translation(SOURCE, FAITHFUL[lang].replace(old, new), lang)
    assert [f.message for f in findings] == [message]


def test_a_dropped_fact_and_an_added_fact_are_findings():
    findings = check_translation("Writes were paused for 4 minutes.", "Les écritures ont été suspendues.", "fr")
    assert [f.message for f in findings] == ["The translation leaves out the number “4 minutes” of the source."]
    findings = check_translation("Writes were paused.", "Die Schreibvorgänge wurden 4 Minuten lang pausiert.", "de")
    assert [f.message for f in findings] == [
        "The translation adds the number “4 Minuten”, which the source does not have."]


@pytest.mark.parametrize(("lang", "translation", "family"), [
    ("fr", "Les paiements sont retardés. Nous vous rembourserons les frais.", "credits and refunds"),
    ("fr", "Les paiements sont retardés. Aucune donnée n'a été perdue.", "data reassurance"),
    ("fr", "Les paiements sont retardés. Le correctif sera déployé dans 30 minutes.", "time commitments"),
    ("fr", "Les paiements sont retardés. Le problème est résolu.", "resolution"),
    ("de", "Die Zahlungen sind verzögert. Betroffene Kunden erhalten eine Gutschrift.", "credits and refunds"),
    ("de", "Die Zahlungen sind verzögert. Es gingen keine Daten verloren.", "data reassurance"),
    ("de", "Die Zahlungen sind verzögert. Die Behebung folgt bis 16 Uhr.", "time commitments"),
    ("de", "Die Zahlungen sind verzögert. Das Problem ist behoben.", "resolution"),
])
def test_a_claim_the_source_does_not_make_stops_in_the_target_language(lang, translation, family):
    source = "Payments are delayed."
    extra = " 30 minutes" if "30 minutes" in translation else (" 16:00" if "16 Uhr" in translation else "")
    findings = check_translation(source + extra, translation, lang)
    claims = [f for f in findings if f.kind == "claim"]
    assert len(claims) == 1 and f", {family})" in claims[0].message


@pytest.mark.parametrize(("source", "translation", "lang"), [
    ("The issue is resolved.", "Le problème est résolu.", "fr"),
    ("The issue is not resolved yet.", "Le problème n'est pas encore résolu.", "fr"),
    ("If you were charged twice, we will refund you.", "Si vous avez été débité deux fois, nous vous rembourserons.",
     "fr"),
    ("No data was lost.", "Es gingen keine Daten verloren.", "de"),
    ("We are not able to offer credits.", "Eine Gutschrift ist nicht vorgesehen.", "de"),
    ("We expect a fix within 30 minutes.", "Wir erwarten eine Behebung innerhalb von 30 Minuten.", "de"),
    ("Next update in 30 minutes.", "Prochaine mise à jour dans 30 minutes.", "fr"),
])
def test_a_claim_the_source_makes_or_a_hedged_one_passes(source, translation, lang):
    assert check_translation(source, translation, lang) == []


def test_a_dropped_hedge_on_a_promise_stops():
    findings = check_translation("We expect a fix within 30 minutes.",
                                 "Un correctif sera déployé dans 30 minutes.", "fr")
    assert [f.kind for f in findings] == ["claim"]


def test_an_empty_translation_stops():
    assert [f.kind for f in check_translation("Payments are delayed.", "  ", "de")] == ["text"]


def test_a_title_says_less_than_the_text_never_more():
    from agents.core.guard.translation import check_title

    assert check_title(SOURCE, "Paiements par carte en échec dans l'UE", "fr") == []  # leaves facts out: fine
    assert [f.message for f in check_title(SOURCE, "Kartenzahlungen in den USA: behoben", "de")] == [
        "The translation says “USA” where the source says “EU”.",
        "The translation speaks about the incident's state (“behoben”, resolution) where the source makes no "
        "such claim."]
