"""Lines of support emails and friendly status posts that state nothing about an incident on their own:
greetings ("Hi there!", "Hello", "Hey"), "the help centre", "need a hand?"; and advice that only says
where to go or when ("head to help.example.com", "you can reach Payments Support through the Help
Centre", "subscribe to get updates", "pause it straight away", "right away"). A store's own terms
otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("hi", "hello", "hey", "hi there")
ADVICE = ("head to", "head over to", "a hand", "straight away", "right away", "reach", "get", "help centre",
          "help center")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0044_refund_said_in_own_words"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
