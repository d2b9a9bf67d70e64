"""What rounds of published-style updates showed the guard should read as update language: "a big thank
you to the volunteers", and "we ask that you …" / "we ask you to …" as a request of the reader's, the
way "please" is (what it asks is read as ever) — marked as advice and as what the company may say it
does. A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("a big thank you", "big thank you")
ASKING = ("ask that you", "ask you to")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ASKING, advice=ASKING, action=ASKING, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0052_readings_of_round_twenty_one"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
