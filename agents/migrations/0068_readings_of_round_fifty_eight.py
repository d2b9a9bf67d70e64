"""What round 58 of published-style updates showed the guard should read as update language: "regardless"
("your reservation is held at the desk regardless") and "fine" ("your recipes and meal plans are fine"; what
it says is spared, the scope check reads against the incident, as it reads "not affected"). A store's own
terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("regardless", "fine")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0067_readings_of_round_fifty_seven"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
