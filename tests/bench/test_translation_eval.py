"""bench/translation_eval.py: its arithmetic on a few labelled translations (one miss and one false
stop on purpose), and that the whole corpus loads and keeps the figures docs/translations.md reports."""

import json
import subprocess
import sys
from pathlib import Path

from bench.translation_eval import measure

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "About 2.5% of card payments in the EU fail."


def test_precision_and_recall_count_stops_of_unfaithful_translations():
    records = [
        {"id": "bad", "lang": "fr", "faithful": False, "source": SOURCE,
         "translation": "Environ 25 % des paiements par carte dans l'UE échouent."},
        {"id": "good", "lang": "fr", "faithful": True, "source": SOURCE,
         "translation": "Environ 2,5 % des paiements par carte dans l'UE échouent."},
        # Mislabelled on purpose: a faithful German translation labelled unfaithful (a miss) ...
        {"id": "miss", "lang": "de", "faithful": False, "source": SOURCE,
         "translation": "Etwa 2,5 % der Kartenzahlungen in der EU schlagen fehl."},
        # ... and one that drops "about", labelled faithful (a false stop).
        {"id": "false-stop", "lang": "de", "faithful": True, "source": SOURCE,
         "translation": "2,5 % der Kartenzahlungen in der EU schlagen fehl."},
    ]
    result = measure(records)
    assert (result["unfaithful"], result["stopped_unfaithful"], result["stopped_faithful"]) == (2, 1, 1)
    assert (result["precision"], result["recall"]) == (0.5, 0.5)
    assert sorted(record["id"] for record, _ in result["wrong"]) == ["false-stop", "miss"]


def test_the_corpus_keeps_the_reported_figures():
    out = subprocess.run([sys.executable, "bench/translation_eval.py", "--json"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    figures = json.loads(out)
    assert figures["holdout/all"]["texts"] == 24 and figures["tune/all"]["texts"] == 26
    assert {part: (figures[part]["precision"], figures[part]["recall"]) for part in ("tune/all", "holdout/all")} == {
        "tune/all": (1.0, 1.0), "holdout/all": (1.0, 1.0)}
