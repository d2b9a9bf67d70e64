"""What rounds 55 and 56 of published-style updates showed the guard should read as update language, as
plain words and phrases: "a batch of"; "fault" ("we're investigating a fault in the portal"), also as what
the company may say of itself; and, also as advice, "look over", "look at", "look through" ("please look
over any incidents that triggered"), "tip", "on the day" and where mail lands ("check your inbox", "your
spam folder"). A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

ADVICE = ("look over", "look at", "look through", "tip", "inbox", "spam folder", "junk folder",
          "on the day")
ACTION = ("fault", "faults")
PLAIN = (*ADVICE, "a batch of", *ACTION)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN, advice=ADVICE, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0065_promises_of_round_fifty_four"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
