"""What rounds of published-style updates showed the guard should read as update language: whom customers
may "talk to" or "speak to" (and what they may "talk through"), "if you aren't sure …" — as plain
phrases and as advice; and "comparing", as what the company may say it does while it investigates ("our
team is comparing statements against the source data"). A store's own terms otherwise stay as its admins
left them."""

from django.db import migrations

SPEAKING = ("talk to", "talk through", "speak to", "speak with", "not sure", "aren't sure", "aren’t sure", "unsure")
COMPARING = ("compare", "comparing", "compared")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, SPEAKING + COMPARING, advice=SPEAKING, action=COMPARING, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0054_free_things_are_gifts"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
