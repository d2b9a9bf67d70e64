"""Synonyms: a word the incident does not use passes where the incident uses a word of its most common
sense (WordNet), and nothing broader or rarer does."""

import logging

import pytest

from agents.core.guard import grounding
from agents.core.guard.grounding import Vocabulary, evidence_stems, find_unsupported
from agents.core.guard.synonyms import DEFAULT_DIR, WordNet, index_line, wordnet
from agents.core.policy import DEFAULT_VOCABULARY
from tests.services import missing

VOCABULARY = Vocabulary.of(DEFAULT_VOCABULARY)

# A door-access incident: its facts say "telephone", never "phone".
DOORS = {
    "incident": {"incident_id": "inc_doors_0412", "status": "degraded",
                 "summary": "Mobile keys on the telephone app are rejected by some door readers."},
    "approved_actions": ["use a badge or key fob instead", "issue temporary badges from the admin console"],
    "key_messages": ["Refunds for the duplicate charges will be issued within five days."],
}


@pytest.fixture
def real_wordnet():
    found = wordnet()
    if not found.available:
        missing(f"WordNet is not installed in {found.directory} (apt-get install wordnet-base)")
    return found


def unsupported(text, context=DOORS):
    return [u.found for u in find_unsupported(text, evidence_stems(context), VOCABULARY)]


def test_the_binary_search_finds_the_words_of_every_index_and_no_other(real_wordnet):
    for part, name in zip(real_wordnet.parts, ("noun", "verb", "adj", "adv"), strict=True):
        lines = [line for line in (real_wordnet.directory / f"index.{name}").read_bytes().splitlines()
                 if not line.startswith(b" ")]
        sample = lines[::211] + lines[:3] + lines[-3:]  # the first and the last lines of the file too
        for line in sample:
            assert index_line(part.index, line.split()[0]) == line
        assert index_line(part.index, b"zzzqx") is None
        assert index_line(part.index, b"") is None


def test_a_words_synonyms_are_those_of_its_most_common_sense_only(real_wordnet):
    assert "telephone" in real_wordnet.synonyms("phone")
    assert "halt" in real_wordnet.synonyms("stop")
    # "discontinue" is "stop" in a rarer sense; "payment" is broader than "refund", not the same.
    assert "discontinue" not in real_wordnet.synonyms("stop")
    assert "payment" not in real_wordnet.synonyms("refund")
    assert real_wordnet.synonyms("Phone") == real_wordnet.synonyms("phone")
    assert "phone" not in real_wordnet.synonyms("phone")
    # Collocations are left out: "mobile_phone" is two words, compared one by one.
    assert not any("_" in word for word in real_wordnet.synonyms("cellphone"))
    assert real_wordnet.synonyms("kestrel-7") == frozenset() and real_wordnet.synonyms("zzzqx") == frozenset()


def test_a_synonym_of_the_incidents_word_in_its_common_sense_passes(real_wordnet):
    assert unsupported("A phone may be rejected at the door, so please use your badge.") == []
    # Its plural and other forms too: "phones" is read as "phone".
    assert unsupported("Some phones are rejected by door readers.") == []


def test_a_word_whose_common_sense_the_incident_does_not_use_still_stops(real_wordnet):
    # "compensation" is no synonym of "refund"; "tablet" is no telephone.
    assert unsupported("Compensation for the duplicate charges will be issued within five days.") == ["Compensation"]
    assert unsupported("Some tablets are rejected by door readers.") == ["tablets"]


def test_without_wordnet_grounding_reads_the_incidents_own_words_only(tmp_path, monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="agents.core.guard.synonyms"):
        absent = WordNet(tmp_path / "nowhere")
    assert not absent.available and absent.synonyms("phone") == frozenset()
    assert "wordnet-base" in caplog.text and str(tmp_path / "nowhere") in caplog.text
    monkeypatch.setattr(grounding, "synonyms", absent.synonyms)
    assert unsupported("A phone may be rejected at the door, so please use your badge.") == ["phone"]


def test_a_damaged_line_reads_as_no_synonyms_and_is_logged_once(real_wordnet, tmp_path, caplog):
    for name in real_wordnet.directory.iterdir():
        (tmp_path / name.name).write_bytes(name.read_bytes())
    # The noun "copy"'s index line, cut after its word: the line is there, its senses are not.
    index = tmp_path / "index.noun"
    lines = [b"copy n" if line.startswith(b"copy ") else line for line in index.read_bytes().split(b"\n")]
    index.write_bytes(b"\n".join(lines))
    damaged = WordNet(tmp_path)
    assert "transcript" in real_wordnet.synonyms("copy")  # the noun's first sense: "transcript", "copy"
    with caplog.at_level(logging.WARNING, logger="agents.core.guard.synonyms"):
        assert damaged.synonyms("copy") == frozenset()
        assert damaged.synonyms("copy") == frozenset()  # kept: read once
        assert "telephone" in damaged.synonyms("phone")  # the other lines still read
        damaged.synonyms.__wrapped__(damaged, "copy")  # read again: logged only the first time
    assert damaged.damaged and caplog.text.count("cannot be read") == 1


def test_the_database_is_read_from_the_directory_the_environment_names(tmp_path, monkeypatch):
    wordnet.cache_clear()
    monkeypatch.setenv("GATED_REVIEW_WORDNET_DIR", str(tmp_path))
    try:
        assert wordnet().directory == tmp_path and not wordnet().available
    finally:
        wordnet.cache_clear()
    monkeypatch.delenv("GATED_REVIEW_WORDNET_DIR")
    assert str(wordnet().directory) == DEFAULT_DIR
