"""A charge said to be waived by naming its absence is a claim of the credits and refunds family: "the
conversion will complete with no conversion fee", "at no extra cost" (its new paraphrase; what the incident
says of its own charges still supports it). A family whose pattern its admins changed stays as they left it."""

from django.db import migrations


def _line() -> str:
    from agents.core.policy import NO_CHARGE

    return NO_CHARGE


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    add_paraphrases(apps, schema_editor, "credits and refunds", [_line()])


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, "credits and refunds", [_line()])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0055_readings_of_round_thirty_three"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
