"""A word's dictionary forms (lemminflect), kept per word: the same words recur in every text the guard
reads, and lemminflect's lookup is the slow part of reading them. Plain Python: no Django here."""

from __future__ import annotations

import functools

import lemminflect


@functools.lru_cache(maxsize=16384)
def lemmas_of(word: str) -> frozenset[str]:
    """The dictionary forms of ``word`` as any part of speech ("sent": "send"; "frozen": "freeze",
    "frozen"); empty for a word no dictionary knows."""
    return frozenset(lemma for found in lemminflect.getAllLemmas(word).values() for lemma in found)


@functools.lru_cache(maxsize=16384)
def verbs_of(word: str) -> tuple[str, ...]:
    """The verbs ``word`` is a form of ("sent": "send"), or none."""
    return lemminflect.getAllLemmas(word, "VERB").get("VERB", ())


@functools.lru_cache(maxsize=16384)
def is_inflection(word: str, lemma: str, tag: str) -> bool:
    """Whether ``word`` is ``lemma``'s form ``tag`` (Penn tags: "VBN" the past participle, "VBD" the
    past tense)."""
    return word in lemminflect.getInflection(lemma, tag)


@functools.lru_cache(maxsize=16384)
def parts_of(word: str) -> frozenset[str]:
    """The parts of speech ``word`` may be a form of ("simply": ADV; "run": VERB and NOUN); empty for a
    word no dictionary knows."""
    return frozenset(lemminflect.getAllLemmas(word))
