"""An update that says it is now closed ("… so this is now closed") makes a claim of the closure family
(its new paraphrase), which only a resolved incident supports. A family whose pattern its admins changed
stays as they left it."""

from django.db import migrations


def _line() -> str:
    from agents.core.policy import THIS_CLOSED

    return THIS_CLOSED


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    add_paraphrases(apps, schema_editor, "closure", [_line()])


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, "closure", [_line()])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0059_readings_of_round_fifty"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
