"""What round 54 of published-style updates showed the guard should read as update language: "as we go"
("We'll update this page as we go") and "we're satisfied" ("once we're satisfied the map is stable"), as
plain phrases and as what the company may say of itself. A store's own terms otherwise stay as its admins
left them."""

from django.db import migrations

PLAIN = ("as we go", "we're satisfied", "we’re satisfied", "we are satisfied")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN, action=PLAIN, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0063_readings_of_round_fifty_three"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
