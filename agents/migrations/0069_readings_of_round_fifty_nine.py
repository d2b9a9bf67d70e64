"""What round 59 of published-style updates showed the guard should read as update language: "put a fix in"
("we put a fix in at 10:15") as what the company may say of itself. A store's own terms otherwise stay as
its admins left them."""

from django.db import migrations

ACTION = ("put a fix in", "put in a fix", "putting a fix in", "putting in a fix")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, ACTION, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0068_readings_of_round_fifty_eight"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
