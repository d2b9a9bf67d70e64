"""What rounds 46 and 47 of published-style updates showed the guard should read as update language: a
booking or an offer that "still stands", "you're not alone", "to be clear", "cheers" and "happily" as plain
phrases and words, "spotted" as "noticed" is, and "wait" as advice ("please wait and report it online once
things are back up"). A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("still stands", "still stand", "not alone", "to be clear", "cheers", "happily", "spot", "spots", "spotted",
         "spotting")
ADVICE = ("wait",)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0056_no_charge_is_a_waiver"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
