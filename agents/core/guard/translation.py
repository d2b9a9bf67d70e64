"""The invariance check of a translation (docs/translations.md): a translation of a customer update may
say the source's facts in other words, never other facts. Two parts:

- the facts a reader acts on, extracted from the source and the translation and compared as
  multisets after normalising each language's way of writing them: numbers with their unit and
  qualifier ("about 30 minutes", "2,5 %", "12 000"), clock times, dates, ids (incident and ticket
  ids, versions), URLs, email addresses, phone numbers and region tokens. Anything added, dropped or
  changed is a finding a person reads ("the translation says “45 minutes” where the source says
  “30 minutes”");
- the claim families of the target language (credits and refunds, fault, data safety, time
  promises, state): a claim the translation makes, unhedged, must be made unhedged by the source
  too. The source has passed the guard against its incident, so a translation that claims nothing
  more than its source is held to the same incident.

Plain Python: no Django here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from agents.core.guard.claims import family_claims
from agents.core.patterns import compile_pattern
from agents.core.policy import DEFAULT_CLAIM_FAMILIES, ClaimFamily

SOURCE_LANGUAGE = "en"


@dataclass(frozen=True)
class Finding:
    kind: str  # number, time, date, id, url, email, phone, region, claim
    message: str  # for a person: what the translation says against what the source says
    found: str = ""  # the words in the translation ("" when the translation dropped a fact)
    source: str = ""  # the words in the source ("" when the translation added a fact)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "found": self.found, "source": self.source}


@dataclass(frozen=True)
class Fact:
    kind: str
    key: tuple  # the normalised value: equal keys are the same fact in any language
    text: str  # as written


@dataclass(frozen=True)
class TargetFamily:
    """A claim family in a target language: its patterns (RE2, case-insensitive) and the English
    families (agents.core.policy.DEFAULT_CLAIM_FAMILIES names) whose unhedged claim in the source
    licenses it."""

    name: str
    check: str  # liability, data_safety, time_commitment, state_claim, restricted_claims
    patterns: tuple[str, ...]
    licensed_by: tuple[str, ...]
    # "negation": only a negation lets a match pass ("si vous avez été débité deux fois, nous vous
    # rembourserons" is a promise); "any": a hedge or a condition does too.
    hedging: str = "any"


@dataclass(frozen=True)
class Language:
    code: str
    name: str  # in the language itself, for the switcher
    decimal: str  # the decimal separator
    thousands: tuple[str, ...]  # the thousands separators
    numbers: dict[str, int] = field(default_factory=dict)  # number words counted as numbers
    units: tuple[tuple[str, str], ...] = ()  # (pattern, canonical unit); longer words first
    qualifiers: tuple[tuple[str, str], ...] = ()  # (pattern, canonical qualifier) just before a number
    months: dict[str, int] = field(default_factory=dict)
    relative_days: dict[str, str] = field(default_factory=dict)
    regions: tuple[tuple[str, str], ...] = ()  # (pattern, region token)
    hedges: frozenset[str] = frozenset()  # words before a claim that make it an expectation or a condition
    negations: frozenset[str] = frozenset()
    # Words that make a time the next update's, not a fix's ("prochaine mise à jour dans 30 minutes").
    cadence: frozenset[str] = frozenset()
    families: tuple[TargetFamily, ...] = ()
    # Clock times: the pattern's groups are hour, minute (optional), am/pm (optional), zone (optional).
    times: tuple[str, ...] = ()


# Case-sensitive: French "est" is a verb, not a zone.
_ZONE = r"(?:\s*\(?(?-i:(UTC|GMT|CET|CEST|MEZ|MESZ|BST|EST|EDT|PST|PDT))\)?)?"

# ---------------------------------------------------------------- English (the source)
_EN_UNITS = (
    (r"%|per\s*cent|percent", "%"),
    (r"milliseconds?|ms", "ms"),
    (r"seconds?|secs?", "s"),
    (r"minutes?|mins?", "min"),
    (r"hours?|hrs?", "h"),
    (r"days?", "d"),
    (r"weeks?", "wk"),
    (r"months?", "mo"),
    (r"[KMGT]B", "bytes"),
)
_EN = Language(
    code="en", name="English", decimal=".", thousands=(",",),
    numbers={"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "twice": 2},
    units=_EN_UNITS,
    qualifiers=(
        (r"about|around|approximately|roughly|some|nearly|almost|an\s+estimated|~", "about"),
        (r"more\s+than|over|above", "more than"),
        (r"less\s+than|fewer\s+than|under|below", "less than"),
        (r"up\s+to", "up to"),
        (r"at\s+least", "at least"),
        (r"at\s+most|no\s+more\s+than", "at most"),
    ),
    months={"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
            "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
            "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12,
            "dec": 12},
    relative_days={"today": "today", "tonight": "today", "tomorrow": "tomorrow", "yesterday": "yesterday"},
    regions=(
        (r"\bEU\b|\bEurope\b|\bEuropean\b", "eu"),
        (r"\bUS\b|\bU\.S\.|\bUSA\b|\bUnited\s+States\b|\bAmerican\b", "us"),
        (r"\bUK\b|\bUnited\s+Kingdom\b|\bBritain\b|\bBritish\b", "uk"),
        (r"\bAPAC\b|\bAsia[-\s]Pacific\b", "apac"),
        (r"\bEMEA\b", "emea"),
        (r"\bLATAM\b|\bLatin\s+America\b", "latam"),
    ),
    times=(
        r"\b(\d{1,2}):(\d{2})(?!\d)(?:\s*(am|pm|a\.m\.|p\.m\.))?" + _ZONE,
        r"\b(\d{1,2})()\s*(am|pm|a\.m\.|p\.m\.)" + _ZONE,
    ),
)

# The rest of a word, accented letters included (RE2's \w is ASCII: "rembours\w*" would stop at "é").
_L = "[a-zà-öø-ÿß]*"

# ---------------------------------------------------------------- French
_FR_HEDGES = frozenset({
    "environ", "vers", "prévoyons", "prévoit", "prévu", "prévue", "estimons", "estimé", "estimée",
    "estimation", "espérons", "pensons", "croyons", "devrait", "devraient", "pourrait", "pourraient",
    "probablement", "objectif", "visons", "comptons", "attendons", "normalement", "généralement",
    "si", "lorsque", "quand", "dès", "avant", "pour", "afin", "tôt", "confirmer",
    "vérifier", "vérifions", "pas", "ne", "n", "aucun", "aucune", "jamais", "sans", "non",
})  # fmt: skip
_FR_NEGATIONS = frozenset({"ne", "n", "pas", "aucun", "aucune", "jamais", "sans", "non", "ni"})
_FR = Language(
    code="fr", name="Français", decimal=",", thousands=(" ", "\u00a0", "\u202f", "."),
    numbers={"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9,
             "dix": 10, "onze": 11, "douze": 12, "quinze": 15, "vingt": 20, "trente": 30},
    units=(
        (r"%|pour\s*cent", "%"),
        (r"millisecondes?|ms", "ms"),
        (r"secondes?|s\b", "s"),
        (r"minutes?|min\b", "min"),
        (r"heures?|h\b", "h"),
        (r"jours?", "d"),
        (r"semaines?", "wk"),
        (r"mois", "mo"),
        (r"[KMGT]o|[KMGT]B", "bytes"),
    ),
    qualifiers=(
        (r"environ|à\s+peu\s+près|approximativement|près\s+de|presque|quelque|~", "about"),
        (r"plus\s+de|au-delà\s+de", "more than"),
        (r"moins\s+de", "less than"),
        (r"jusqu['’]à", "up to"),
        (r"au\s+moins", "at least"),
        (r"au\s+plus|au\s+maximum", "at most"),
    ),
    months={"janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6,
            "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
            "décembre": 12, "decembre": 12},
    relative_days={"aujourd'hui": "today", "aujourd’hui": "today", "ce soir": "today", "demain": "tomorrow",
                   "hier": "yesterday"},
    regions=(
        (r"\bUE\b|\bEU\b|\bEurope\b|\beurop[ée]en(?:ne)?s?\b", "eu"),
        (r"\bUS\b|\bUSA\b|\b[ÉE]tats[-\s]Unis\b|\bam[ée]ricain(?:e)?s?\b", "us"),
        (r"\bUK\b|\bRoyaume[-\s]Uni\b|\bbritannique", "uk"),
        (r"\bAPAC\b|\bAsie[-\s]Pacifique\b", "apac"),
        (r"\bEMEA\b", "emea"),
        (r"\bLATAM\b|\bAm[ée]rique\s+latine\b", "latam"),
    ),
    hedges=_FR_HEDGES, negations=_FR_NEGATIONS,
    cadence=frozenset({"mise", "prochaine", "prochain", "informerons", "tiendrons", "communiquerons", "point"}),
    # "14 h 30" is a time; "2 h" alone is a duration unless a zone or a word of time ("à 14 h") says so.
    times=(
        r"\b(\d{1,2})\s?h\s?(\d{2})()(?!\d)" + _ZONE,
        r"\b(\d{1,2}):(\d{2})()(?!\d)" + _ZONE,
        r"\b(\d{1,2})\s?h()()(?![^\W\d_])\s*\(?(UTC|GMT|CET|CEST)\b\)?",
        r"(?:\b(?:à|vers|dès|depuis|jusqu['’]à|entre|et|d['’]ici)\s+)(\d{1,2})\s?h()()()(?![^\W\d_])",
    ),
    families=(
        TargetFamily("resolution", "state_claim", (
            r"\brésolue?s?\b", r"\bcorrigée?s?\b", r"\bréglée?s?\b",
            r"\bincident\s+(?:est\s+)?(?:clos|clôturé|terminé)",
            r"\bentièrement\s+rétablie?s?\b", r"\bcomplètement\s+rétablie?s?\b",
        ), ("resolution", "recovery", "closure")),
        TargetFamily("working again", "state_claim", (
            r"\bfonctionnen?t?\s+(?:à\s+nouveau|de\s+nouveau|normalement|correctement)",
            r"\bde\s+nouveau\s+(?:disponibles?|opérationnel)", r"\bà\s+nouveau\s+(?:disponibles?|opérationnel)",
            r"\b(?:est|sont|a\s+été|ont\s+été)\s+rétablie?s?\b", r"\bretour\s+à\s+la\s+normale",
            r"\brevenue?s?\s+à\s+la\s+normale", r"\bstabilisée?s?\b",
        ), ("resolution", "recovery", "closure", "recovered", "working again", "stability")),
        TargetFamily("cause identified", "state_claim", (
            r"\b(?:identifié|trouvé|déterminé)\s+(?:la\s+)?cause",
            r"\bcause\s+(?:a\s+été\s+|est\s+)?(?:identifiée|trouvée)",
        ), ("cause identified",)),
        TargetFamily("credits and refunds", "liability", (
            rf"\brembours{_L}", r"\bcrédits?\s+de\s+service", r"\bavoirs?\s+(?:de|sur|commercial)",
            r"\bun\s+avoir\b", rf"\bdédommag{_L}", rf"\bindemnis{_L}", rf"\bcompens(?:ation|er|erons|é){_L}",
            r"\bgeste\s+commercial", r"\bgratuit(?:ement)?\b", r"\b(?:ne\s+sera|ne\s+serez|ne\s+seront)\s+pas\s+factur",
            r"\bfrais\s+(?:\w+\s+)?(?:seront|sont)\s+(?:annulés|offerts)",
        ), ("credits and refunds",), hedging="negation"),
        TargetFamily("fault and negligence", "liability", (
            r"\bnotre\s+faute", r"\bnégligence", r"\bnous\s+(?:sommes|étions)\s+(?:entièrement\s+)?responsables",
            r"\b(?:assumons|acceptons)\s+(?:l'entière\s+|toute\s+la\s+|la\s+)?responsabilité",
            r"\bnotre\s+erreur", r"\bviolation\s+(?:du|de\s+notre)\s+(?:contrat|SLA)",
        ), ("fault and negligence",), hedging="negation"),
        TargetFamily("data reassurance", "data_safety", (
            r"\baucune\s+donnée\s+(?:\w+\s+)?n['’](?:a|ont)\s+été\s+(?:perdue|exposée|compromise|consultée|supprimée)",
            r"\baucune\s+perte\s+de\s+données", r"\bpas\s+de\s+perte\s+de\s+données",
            r"\b(?:vos\s+|les\s+)?données\s+(?:sont|étaient|restent|sont\s+restées)\s+(?:\w+\s+)?(?:en\s+sécurité|intactes|"
            r"protégées|sécurisées)",
            r"\bvos\s+données\s+n['’]ont\s+pas\s+été\s+(?:touchées|affectées|compromises)",
        ), ("data reassurance",)),
        TargetFamily("data breach", "data_safety", (
            r"\bviolation\s+de\s+données", r"\bfuite\s+de\s+données", rf"\bpirat{_L}", r"\bcyberattaque",
            r"\baccès\s+non\s+autorisé",
        ), ("data breach",)),
        TargetFamily("guarantees", "restricted_claims", (
            rf"\bgaranti{_L}", r"\bnous\s+(?:vous\s+)?(?:promettons|assurons)",
            r"\bne\s+se\s+reproduira\s+(?:plus|jamais)",
            r"\b(?:totalement|parfaitement)\s+sûr",
        ), ("guarantees", "absolute assurances")),
        TargetFamily("time commitments", "time_commitment", (
            r"\b(?:dans|d'ici|d’ici|en\s+moins\s+de|sous)\s+(?:les\s+)?(?:\d+|une|un|deux|trois|quelques)\s*"
            r"(?:minutes?|heures?|h\b|jours?)",
            r"\b(?:dans|d'ici|d’ici)\s+(?:la\s+fin\s+de\s+la\s+journée|ce\s+soir|demain)",
            r"\bd['’]ici\s+\d{1,2}\s?h", r"\bau\s+plus\s+tard\b", r"\b(?:très\s+)?(?:bientôt|rapidement|sous\s+peu)",
        ), ("time promises", "time commitments")),
    ),
)

# ---------------------------------------------------------------- German
_DE_HEDGES = frozenset({
    "etwa", "ungefähr", "rund", "circa", "ca", "voraussichtlich", "erwarten", "erwartet", "hoffen",
    "schätzen", "geschätzt", "schätzung", "sollte", "sollten", "könnte", "könnten", "wahrscheinlich",
    "vermutlich", "ziel", "planen", "normalerweise", "wenn", "falls", "sobald", "bevor", "um", "früh",
    "bestätigen", "prüfen", "nicht", "kein", "keine", "keinen", "nie", "niemals", "ohne",
    "von", "ab",  # a range ("von 22:00 bis 23:00 Uhr") is a window, not a deadline
})  # fmt: skip
_DE_NEGATIONS = frozenset({"nicht", "kein", "keine", "keinen", "keiner", "nie", "niemals", "ohne"})
_DE = Language(
    code="de", name="Deutsch", decimal=",", thousands=(".", " ", "\u00a0", "\u202f"),
    numbers={"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
             "zehn": 10, "elf": 11, "zwölf": 12, "fünfzehn": 15, "zwanzig": 20, "dreißig": 30, "zweimal": 2,
             "doppelt": 2},
    units=(
        (r"%|Prozent", "%"),
        (r"Millisekunden?|ms", "ms"),
        (r"Sekunden?|Sek\.?|s\b", "s"),
        (r"Minuten?|Min\.?", "min"),
        (r"Stunden?|Std\.?|h\b", "h"),
        (r"Tagen?|Tage", "d"),
        (r"Wochen?", "wk"),
        (r"Monaten?|Monate", "mo"),
        (r"[KMGT]B", "bytes"),
    ),
    qualifiers=(
        (r"etwa|ungefähr|rund|circa|ca\.|knapp|fast|beinahe|~", "about"),
        (r"mehr\s+als|über", "more than"),
        (r"weniger\s+als|unter", "less than"),
        (r"bis\s+zu", "up to"),
        (r"mindestens", "at least"),
        (r"höchstens|maximal", "at most"),
    ),
    months={"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "april": 4, "mai": 5, "juni": 6, "juli": 7,
            "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12},
    relative_days={"heute": "today", "heute abend": "today", "morgen": "tomorrow", "gestern": "yesterday"},
    regions=(
        (r"\bEU\b|\bEuropa\b|\beuropäische[nmrs]?\b", "eu"),
        (r"\bUS\b|\bUSA\b|\bVereinigten\s+Staaten\b|\bamerikanische[nmrs]?\b", "us"),
        (r"\bUK\b|\bVereinigten\s+Königreich\b|\bGroßbritannien\b|\bbritische[nmrs]?\b", "uk"),
        (r"\bAPAC\b|\bAsien[-\s]Pazifik\b", "apac"),
        (r"\bEMEA\b", "emea"),
        (r"\bLATAM\b|\bLateinamerika\b", "latam"),
    ),
    hedges=_DE_HEDGES, negations=_DE_NEGATIONS,
    cadence=frozenset({"update", "aktualisierung", "nächste", "nächstes", "nächsten", "informieren", "melden",
                       "berichten"}),
    times=(
        r"\b(\d{1,2})[:.](\d{2})()(?!\d)(?:\s*Uhr)?" + _ZONE,
        r"\b(\d{1,2})()()\s*Uhr" + _ZONE,
    ),
    families=(
        TargetFamily("resolution", "state_claim", (
            r"\bbehoben\b", r"\bgelöst\b", r"\bbeseitigt\b",
            r"\b(?:Vorfall|Störung)\s+(?:ist\s+)?(?:abgeschlossen|beendet)",
            r"\bvollständig\s+wiederhergestellt",
        ), ("resolution", "recovery", "closure")),
        TargetFamily("working again", "state_claim", (
            rf"\bfunktionier{_L}\s+(?:wieder|normal|einwandfrei)", r"\bwieder\s+(?:verfügbar|erreichbar|normal|online)",
            r"\bwiederhergestellt\b", r"\blaufen\s+wieder\b", r"\bläuft\s+wieder\b", r"\bstabilisiert\b",
        ), ("resolution", "recovery", "closure", "recovered", "working again", "stability")),
        TargetFamily("cause identified", "state_claim", (
            r"\bUrsache\s+(?:\w+\s+)?(?:gefunden|identifiziert|ermittelt)",
        ), ("cause identified",)),
        TargetFamily("credits and refunds", "liability", (
            rf"\bGutschrift{_L}", rf"\berstatt{_L}", rf"\bRückerstattung{_L}", rf"\bentschädig{_L}", r"\bEntschädigung",
            r"\bKompensation", r"\bkostenlos\b", r"\bnicht\s+(?:in\s+Rechnung\s+gestellt|berechnet)",
            r"\bGebühren\s+(?:\w+\s+)?(?:erlassen|entfallen)",
        ), ("credits and refunds",), hedging="negation"),
        TargetFamily("fault and negligence", "liability", (
            r"\bunsere\s+Schuld", r"\bunser\s+(?:Fehler|Verschulden)", rf"\bFahrlässig{_L}",
            r"\b(?:übernehmen|tragen)\s+(?:die\s+)?(?:volle\s+)?Verantwortung", r"\bhaften\b", r"\bHaftung\b",
            r"\bVerletzung\s+(?:des|unseres)\s+(?:Vertrags|SLA)",
        ), ("fault and negligence",), hedging="negation"),
        TargetFamily("data reassurance", "data_safety", (
            r"\bkeine\s+Daten\s+(?:\w+\s+)?(?:verloren|offengelegt|kompromittiert|gelöscht|abgeflossen)",
            r"\bkein(?:e|en)?\s+Datenverlust", r"\b(?:Ihre\s+|die\s+)?Daten\s+(?:sind|waren|bleiben|blieben)\s+"
            r"(?:\w+\s+)?(?:sicher|intakt|geschützt|unversehrt)",
            r"\bIhre\s+Daten\s+(?:sind|waren)\s+nicht\s+betroffen",
        ), ("data reassurance",)),
        TargetFamily("data breach", "data_safety", (
            rf"\bDatenleck{_L}", rf"\bDatenschutzverletzung{_L}", r"\bgehackt\b", rf"\b(?:Hacker|Cyber)angriff{_L}",
            r"\bunbefugte[nr]?\s+Zugriff",
        ), ("data breach",)),
        TargetFamily("guarantees", "restricted_claims", (
            rf"\bgarantier{_L}", r"\bGarantie\b", r"\bwir\s+versprechen", r"\bwird\s+(?:nie\s+)?wieder\s+vorkommen",
            r"\bwird\s+nicht\s+wieder\s+(?:vorkommen|passieren)", r"\babsolut\s+sicher",
        ), ("guarantees", "absolute assurances")),
        TargetFamily("time commitments", "time_commitment", (
            r"\b(?:innerhalb|binnen)\s+(?:von\s+|der\s+nächsten\s+)?(?:\d+|einer|eines|zwei|drei|wenigen)\s*"
            r"(?:Minuten?|Stunden?|Tagen?|Std)",
            r"\bin\s+(?:\d+|einer|zwei|drei|wenigen)\s+(?:Minuten|Stunden?|Tagen)",
            r"\bbis\s+(?:spätestens\s+)?\d{1,2}(?::\d{2})?\s*Uhr", r"\bbis\s+(?:heute\s+Abend|morgen|Tagesende)",
            r"\bspätestens\b", r"\bin\s+Kürze\b", r"\b(?:sehr\s+)?bald\b", r"\bgleich\b",
        ), ("time promises", "time commitments")),
    ),
)

LANGUAGES: dict[str, Language] = {language.code: language for language in (_EN, _FR, _DE)}

# ---------------------------------------------------------------- the facts of a text

_URL = re.compile(r"\bhttps?://[^\s<>\"'»«]+|\bwww\.[^\s<>\"'»«]+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
# A phone number: a "+" or a leading 0, then digit groups each after at most one separator.
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}|\(0\d+\)|0\d+)(?:[ \u00a0\-/.]?\(?\d+\)?){2,}")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2})?\s*(Z|UTC)?)?\b")
_ID = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b|#\d+\b|\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+(?:\.\d+)*\b")
_TRAILING = ".,;:!?)]}’'\"»"


def _blank(text: str, start: int, end: int) -> str:
    """The text with [start, end) turned to spaces, so later patterns do not read it again."""
    return text[:start] + " " * (end - start) + text[end:]


def _take(pattern: re.Pattern, text: str):
    """Each match of ``pattern`` and the text with the matches blanked."""
    found = []
    for m in pattern.finditer(text):
        found.append(m)
    for m in reversed(found):
        text = _blank(text, m.start(), m.end())
    return found, text


def _number(raw: str, language: Language) -> Decimal | None:
    digits = raw
    for separator in language.thousands:
        if separator != language.decimal:
            digits = re.sub(rf"(?<=\d){re.escape(separator)}(?=\d{{3}}(?!\d))", "", digits)
    digits = digits.replace(language.decimal, ".")
    try:
        return Decimal(digits).normalize()
    except InvalidOperation:
        return None


def _number_pattern(language: Language) -> re.Pattern:
    separators = "".join(re.escape(s) for s in language.thousands)
    decimal = re.escape(language.decimal)
    words = "|".join(sorted(language.numbers, key=len, reverse=True))
    qualifier = "|".join(f"(?:{p})" for p, _ in language.qualifiers)
    unit = "|".join(f"(?:{p})" for p, _ in language.units)
    return re.compile(
        rf"(?:(?<![^\W\d_])(?P<qualifier>{qualifier})\s*)?"
        rf"(?P<number>(?<![\w.,])\d{{1,3}}(?:[{separators}]\d{{3}})+(?:{decimal}\d+)?(?![\d])"
        rf"|(?<![\w.,])\d+(?:{decimal}\d+)?(?![\d]|[.,]\d)|\b(?:{words})\b)"
        rf"(?:[\s\u00a0\u202f-]*(?P<unit>{unit})(?![^\W\d_]))?",
        re.IGNORECASE,
    )


def _canonical(options: tuple[tuple[str, str], ...], words: str | None) -> str:
    if not words:
        return ""
    for pattern, canonical in options:
        if re.fullmatch(pattern, words, re.IGNORECASE):
            return canonical
    return words.lower()


def _date_pattern(language: Language) -> re.Pattern:
    months = "|".join(sorted((re.escape(m) for m in language.months), key=len, reverse=True))
    if language.code == "en":
        return re.compile(rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{months})\.?"
                          rf"|(?P<m2>{months})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b)(?:,?\s+(?P<y>\d{{4}}))?",
                          re.IGNORECASE)
    ordinal = r"(?:er|\.)?" if language.code == "fr" else r"\.?"
    return re.compile(rf"\b(?P<d1>\d{{1,2}}){ordinal}\s*(?P<m1>{months})\b(?:\s+(?P<y>\d{{4}}))?", re.IGNORECASE)


def _hour(hour: str, minute: str, meridiem: str | None) -> tuple[int, int]:
    h, m = int(hour), int(minute or 0)
    meridiem = (meridiem or "").replace(".", "").lower()
    if meridiem == "pm" and h < 12:
        h += 12
    if meridiem == "am" and h == 12:
        h = 0
    return h, m


def _zone(zone: str | None) -> str:
    zone = (zone or "").upper()
    return {"GMT": "UTC", "MEZ": "CET", "MESZ": "CEST"}.get(zone, zone)


def facts(text: str, language: Language) -> list[Fact]:
    """The facts of ``text`` in ``language`` a translation must keep, in a normalised form."""
    found: list[Fact] = []

    def add(kind, key, written):
        found.append(Fact(kind, key, written.strip()))

    urls, text = _take(_URL, text)
    for m in urls:
        url = m.group().rstrip(_TRAILING)
        add("url", (url.lower().removeprefix("https://").removeprefix("http://").rstrip("/"),), url)
    emails, text = _take(_EMAIL, text)
    for m in emails:
        add("email", (m.group().lower(),), m.group())
    isos, text = _take(_ISO_DATE, text)
    for m in isos:
        add("date", (int(m[1]), int(m[2]), int(m[3])), m.group())
        if m[4]:
            add("time", (int(m[4]), int(m[5]), _zone(m[6])), m.group())
    dates, text = _take(_date_pattern(language), text)
    for m in dates:
        day, month = m["d1"] or m["d2"], (m["m1"] or m["m2"]).lower()
        add("date", (int(m["y"]) if m["y"] else None, language.months[month], int(day)), m.group())
    for pattern in language.times:
        times, text = _take(re.compile(pattern, re.IGNORECASE), text)
        for m in times:
            h, minute = _hour(m[1], m[2], m[3])
            if h < 24 and minute < 60:
                add("time", (h, minute, _zone(m[4])), m.group())
    phones, text = _take(_PHONE, text)
    for m in phones:
        add("phone", (re.sub(r"\D", "", m.group()),), m.group())
    ids, text = _take(_ID, text)
    for m in ids:
        add("id", (m.group().upper().lstrip("V") if m.group()[:1] in "vV" else m.group().upper(),), m.group())
    for words, day in language.relative_days.items():
        days, text = _take(re.compile(rf"(?<![^\W\d_]){re.escape(words)}(?![^\W\d_])", re.IGNORECASE), text)
        for m in days:
            add("date", (day,), m.group())
    for pattern, token in language.regions:
        regions, text = _take(re.compile(pattern, re.IGNORECASE), text)
        for m in regions:
            add("region", (token,), m.group())
    for m in _number_pattern(language).finditer(text):
        raw = m["number"]
        value = Decimal(language.numbers[raw.lower()]) if raw.lower() in language.numbers else _number(raw, language)
        if value is None:
            continue
        add("number", (value, _canonical(language.units, m["unit"]), _canonical(language.qualifiers, m["qualifier"])),
            m.group())
    return found


# ---------------------------------------------------------------- comparing the facts

_KIND_WORDS = {"number": "number", "time": "time", "date": "date", "id": "id", "url": "link",
               "email": "email address", "phone": "phone number", "region": "region"}


def _changed(kind: str, found: str, source: str) -> Finding:
    return Finding(kind, f"The translation says “{found}” where the source says “{source}”.", found, source)


def compare_facts(source: str, translation: str, language: Language) -> list[Finding]:
    """What the translation adds, drops or changes among the source's facts."""
    source_facts, translated = facts(source, LANGUAGES[SOURCE_LANGUAGE]), facts(translation, language)
    both = Counter(f.key for f in source_facts) & Counter(f.key for f in translated)
    dropped = _unmatched(source_facts, both)
    added = _unmatched(translated, both)
    findings = []
    for new in list(added):  # a changed fact: one added and one dropped of the same kind (same unit first)
        same = [old for old in dropped if old.kind == new.kind]
        closer = [old for old in same if new.kind == "number" and old.key[1] == new.key[1]] or same
        if closer:
            old = closer[0]
            dropped.remove(old)
            added.remove(new)
            findings.append(_changed(new.kind, new.text, old.text))
    findings += [Finding(f.kind, f"The translation adds the {_KIND_WORDS[f.kind]} “{f.text}”, which the source "
                                 f"does not have.", f.text, "") for f in added]
    findings += [Finding(f.kind, f"The translation leaves out the {_KIND_WORDS[f.kind]} “{f.text}” of the source.",
                         "", f.text) for f in dropped]
    return findings


def _unmatched(facts_: list[Fact], both: Counter) -> list[Fact]:
    left = Counter(both)
    kept = []
    for fact in facts_:
        if left[fact.key]:
            left[fact.key] -= 1
        else:
            kept.append(fact)
    return kept


# ---------------------------------------------------------------- claims in the target language

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CLAUSE_BREAK = re.compile(r"[.;:!?,]\s|\b(?:et|mais|car|und|aber|denn|doch)\b", re.IGNORECASE)
_HEDGE_WINDOW = 8


def _words_before(text: str, start: int) -> list[str]:
    head = text[max(0, start - 240):start]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    clause = head[breaks[-1].end():] if breaks else head
    return [w.lower() for w in _WORD.findall(clause)][-_HEDGE_WINDOW:]


def _words_after(text: str, end: int) -> list[str]:
    tail = text[end:end + 120]
    cut = _CLAUSE_BREAK.search(tail)
    return [w.lower() for w in _WORD.findall(tail[:cut.start()] if cut else tail)][:4]


def _is_hedged(text: str, start: int, end: int, family: TargetFamily, language: Language) -> bool:
    words = _words_before(text, start)
    # A negation may follow the claim ("eine Gutschrift ist nicht vorgesehen").
    if any(w in language.negations for w in [*words, *_words_after(text, end)]):
        return True
    if family.check == "time_commitment" and any(w in language.cadence for w in words):
        return True
    return family.hedging != "negation" and any(w in language.hedges for w in words)


def target_claims(text: str, language: Language) -> list[tuple[TargetFamily, str]]:
    """The unhedged claims a text in ``language`` makes, as (family, words), in reading order; where
    two families match the same words, the earlier one reports them."""
    claims, spans = [], []
    for family in language.families:
        for pattern in family.patterns:
            for m in compile_pattern(pattern).finditer(text):
                if any(m.start() < end and start < m.end() for start, end in spans):
                    continue
                if not _is_hedged(text, m.start(), m.end(), family, language):
                    claims.append((m.start(), family, m.group()))
                spans.append((m.start(), m.end()))
    return [(family, words) for _, family, words in sorted(claims, key=lambda c: c[0])]


_CHECK_WORDS = {
    "liability": "promises money or admits blame",
    "data_safety": "speaks about customers' data",
    "time_commitment": "commits to a time",
    "state_claim": "speaks about the incident's state",
    "restricted_claims": "gives a guarantee",
}


def compare_claims(source: str, translation: str, language: Language,
                   source_families: Iterable[ClaimFamily] = DEFAULT_CLAIM_FAMILIES) -> list[Finding]:
    """The claims the translation makes, unhedged, that the source does not make unhedged."""
    made = {family.name for family in source_families if family_claims(source, family)}
    findings, seen = [], set()
    for family, words in target_claims(translation, language):
        if made.intersection(family.licensed_by) or (family.name, words.lower()) in seen:
            continue
        seen.add((family.name, words.lower()))
        findings.append(Finding(
            "claim", f"The translation {_CHECK_WORDS[family.check]} (“{words}”, {family.name}) where the source "
                     f"makes no such claim.", words, ""))
    return findings


def check_translation(source: str, translation: str, language_code: str,
                      source_families: Iterable[ClaimFamily] = DEFAULT_CLAIM_FAMILIES) -> list[Finding]:
    """Every finding of the invariance check; an empty list: the translation keeps the source's facts
    and claims nothing more. A language without claim families gets the fact comparison only."""
    if not translation.strip():
        return [Finding("text", "The translation is empty.")]
    language = LANGUAGES[language_code]
    return compare_facts(source, translation, language) + compare_claims(source, translation, language,
                                                                         tuple(source_families))


def check_title(source: str, title: str, language_code: str,
                source_families: Iterable[ClaimFamily] = DEFAULT_CLAIM_FAMILIES) -> list[Finding]:
    """A translated title says less than the text, never more: every fact it names must be in the
    source text, and it makes no claim the source text does not make (what it leaves out is fine)."""
    language = LANGUAGES[language_code]
    added = [f for f in compare_facts(source, title, language) if f.found]
    return added + compare_claims(source, title, language, tuple(source_families))
