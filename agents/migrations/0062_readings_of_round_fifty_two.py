"""What rounds 51 and 52 of published-style updates showed the guard should read as update language:
"exactly as" and "exactly the same" (as an intensifier: "anything you've reconciled stays exactly as it
is"), "go by" ("please go by the dates on your bill"), "ring" and "give us a ring", "talk it through",
"heading in", "got in touch", "alike", "spot" and "past incidents" as plain words and phrases; "go by",
the ringing and "heading in" as advice too. A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("exactly as", "exactly the same", "go by", "ring", "give us a ring", "a ring", "talk it through",
         "heading in", "head in", "got in touch", "in touch", "alike", "spot", "past incidents")
ADVICE = ("go by", "ring", "give us a ring", "a ring", "talk it through", "heading in", "head in")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0061_readings_of_round_fifty_one"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
