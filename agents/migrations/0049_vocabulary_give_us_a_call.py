"""More advice that only says whom to ask or what to keep: "give the grain desk a call at …", "please
hang on to your printed tickets", "send a quick reminder". A store's own terms otherwise stay as its
admins left them."""

from django.db import migrations

ADVICE = ("hang on to", "a call", "give", "quick")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0048_vocabulary_drop_us_a_line"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
