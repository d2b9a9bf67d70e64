"""What round 57 of published-style updates showed the guard should read as update language: "keep an eye
out" ("keep an eye out for the dispatch note") as advice, and "sort it" ("thanks for your patience while we
sort it") as what the company may say of itself. A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

ADVICE = ("keep an eye out", "keeping an eye out")
ACTION = ("sort it", "sort this", "sorting it", "sorting this")
PLAIN = (*ADVICE, *ACTION)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN, advice=ADVICE, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0066_readings_of_round_fifty_five"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
