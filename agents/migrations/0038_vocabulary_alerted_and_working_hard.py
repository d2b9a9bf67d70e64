"""The grounding vocabulary grown by a few words published updates use while a team works, which state
nothing about an incident on their own: "our engineers have been alerted" or "paged", "we are working
hard on a fix", "we consider this incident resolved" (the state checks still decide whether it is).
"alerted", "paged" and "consider" are marked as the company's actions, as 0032 marked its terms. A
store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("hard",)
ACTION = ("alert", "alerted", "paged", "consider", "considered")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ACTION, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0037_should_be_working_now"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
