"""A thing given for nothing is a goodwill gift: "we'll place it by phone with free overnight shipping",
"we've added a free week of Plus to every account" (the goodwill gifts family's new paraphrase; "feel
free" and "a free helpline" give nothing). A family whose pattern its admins changed stays as they
left it."""

from django.db import migrations


def _line() -> str:
    from agents.core.policy import FREE_THINGS

    return FREE_THINGS


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    add_paraphrases(apps, schema_editor, "goodwill gifts", [_line()])


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, "goodwill gifts", [_line()])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0053_readings_of_round_twenty_eight"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
