"""A word's synonyms in its most common sense, from WordNet: "telephone" for "phone", "halt" for
"stop", "largely" for "mostly". Grounding lets a word the incident does not use stand for one it
does where the two share that sense (docs/guard.md, "Synonyms"). Only the first sense counts, as
WordNet orders a word's senses by how often they occur: "phone" is a telephone before it is a speech
sound. Broader words (hypernyms) never count: "payment" does not stand for "refund".

The database is Princeton WordNet 3.0 as Debian's ``wordnet-base`` installs it (``/usr/share/wordnet``,
or the directory ``GATED_REVIEW_WORDNET_DIR`` names), read in its own format (wndb(5)): each part of
speech has an index file, sorted by word, whose line lists the word's senses as byte offsets into its
data file, most common first. The files are mapped, not loaded: a lookup is a binary search over the
index and one read of the data file. Where the files are missing, no word has synonyms and grounding
reads only the incident's own words (stricter, never looser); a warning says so once, and so does a
line the reader cannot parse (that word then has no synonyms). Plain Python: no Django here.
"""

from __future__ import annotations

import functools
import logging
import mmap
import os
import re
from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_DIR = "/usr/share/wordnet"
_PARTS = ("noun", "verb", "adj", "adv")
# An adjective's position marker in a data line: "median(a)" is "median" before a noun.
_MARKER = re.compile(rb"\([a-z]+\)$")
_WORD = re.compile(r"[a-z][a-z'-]*")


class _Part:
    """One part of speech: its index and data files, mapped read-only."""

    def __init__(self, directory: Path, part: str):
        self.index = _mapped(directory / f"index.{part}")
        self.data = _mapped(directory / f"data.{part}")

    def first_sense(self, word: bytes) -> bytes | None:
        """The data line of ``word``'s most common sense, or None where WordNet has no such word."""
        line = index_line(self.index, word)
        if line is None:
            return None
        fields = line.split()
        # lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
        pointers = int(fields[3])
        offset = int(fields[6 + pointers])
        return self.data[offset : self.data.find(b"\n", offset)]


def _mapped(path: Path) -> mmap.mmap:
    with open(path, "rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def index_line(index: mmap.mmap, word: bytes) -> bytes | None:
    """The index line whose first field is ``word``: a binary search over the file's lines, which are
    sorted byte-wise by it (the licence lines at the top start with spaces, before every word)."""
    if not word or word.startswith(b" "):
        return None
    low, high = 0, len(index)
    while low < high:
        middle = (low + high) // 2
        start = index.rfind(b"\n", 0, middle) + 1
        end = index.find(b"\n", start)
        end = len(index) if end < 0 else end
        space = index.find(b" ", start, end)
        found = index[start : space if space >= 0 else end]
        if found < word:
            low = end + 1
        elif found > word:
            high = start
        else:
            return index[start:end]
    return None


def _words_of(data_line: bytes) -> list[str]:
    """The common words of a synset's data line, without position markers. Collocations ("mobile_phone")
    are left out, as a text's words are compared one by one, and so are names and abbreviations, which
    WordNet spells with capitals ("or" is "OR", Oregon, in its first sense as a noun)."""
    fields = data_line.split()
    # synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] ...
    count = int(fields[3], 16)
    words = (_MARKER.sub(b"", fields[4 + 2 * i]).decode("latin-1") for i in range(count))
    return [word for word in words if "_" not in word and word.islower()]


class WordNet:
    """The database in ``directory``; ``synonyms`` is empty for every word where it is missing."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.damaged = False
        try:
            self.parts = tuple(_Part(self.directory, part) for part in _PARTS)
        except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
            self.parts = ()
            logger.warning("WordNet is not readable in %s (%s): grounding reads the incident's own words only, "
                           "without synonyms (install Debian's wordnet-base)", self.directory, exc)

    @property
    def available(self) -> bool:
        return bool(self.parts)

    @functools.lru_cache(maxsize=16384)  # noqa: B019 (one WordNet per process, kept for its life)
    def synonyms(self, word: str) -> frozenset[str]:
        """The other words of ``word``'s most common sense as each part of speech, lower-cased."""
        word = word.lower()
        if not self.parts or not _WORD.fullmatch(word):
            return frozenset()
        key = word.encode("ascii")
        found = set()
        for part in self.parts:
            try:
                line = part.first_sense(key)
                found.update(_words_of(line) if line is not None else ())
            except (ValueError, IndexError) as exc:  # a damaged file: this word reads as having no synonyms
                if not self.damaged:
                    logger.warning("WordNet in %s has a line that cannot be read (%r, at %r): such words get no "
                                   "synonyms", self.directory, exc, word)
                self.damaged = True
        found.discard(word)
        return frozenset(found)


@functools.cache
def wordnet() -> WordNet:
    """The process's WordNet, opened at first use."""
    return WordNet(os.environ.get("GATED_REVIEW_WORDNET_DIR") or DEFAULT_DIR)


def synonyms(word: str) -> frozenset[str]:
    """The other words of ``word``'s most common sense (per part of speech), or none."""
    return wordnet().synonyms(word)
