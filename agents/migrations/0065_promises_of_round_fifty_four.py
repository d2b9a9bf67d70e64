"""Two promises round 54 of published-style updates showed: that something will be done "the same day"
("we'll dispatch them the same day") is a claim of the time commitments family, and that this update is the
last ("This will be our last update on this issue") one of the closure family, which only a resolved
incident supports. Each is its family's new paraphrase; a family whose pattern its admins changed stays as
they left it."""

from django.db import migrations


def _lines() -> dict[str, str]:
    from agents.core.policy import FINAL_UPDATE, SAME_DAY

    return {"time commitments": SAME_DAY, "closure": FINAL_UPDATE}


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    for family, line in _lines().items():
        add_paraphrases(apps, schema_editor, family, [line])


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    for family, line in _lines().items():
        remove_paraphrases(apps, schema_editor, family, [line])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0064_readings_of_round_fifty_four"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
