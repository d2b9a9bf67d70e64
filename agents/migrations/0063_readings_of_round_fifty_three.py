"""What round 53 of published-style updates showed the guard should read as update language: "behind the
scenes" and "sometimes" ("changes show late, sometimes by up to 3 minutes") as plain phrase and word. A
store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("behind the scenes", "sometimes")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0062_readings_of_round_fifty_two"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
