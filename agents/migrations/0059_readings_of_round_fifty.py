"""What round 50 of published-style updates showed the guard should read as update language: "right now"
and "held up" (as "delayed" is: "field teams whose visits have been held up") as plain phrases, and
"grab" as advice ("just grab a paper score card at the front desk"). A store's own terms otherwise stay
as its admins left them."""

from django.db import migrations

PLAIN = ("right now", "held up")
ADVICE = ("grab",)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0058_readings_of_round_forty_nine"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
