"""Lines of published updates that state nothing about an incident on their own: "Otherwise, no action
is needed", "To be safe, please check your delivery schedule" (the phrase only: "safe" alone stays the
incident's to say), and how customers may feel about it ("we understand how stressful this is",
"upsetting", "disappointing"), "in future" as British updates write it, and "unchanged" (read, like
"unaffected", as a claim that something was spared, which the incident must make). A store's own terms
otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("otherwise", "upsetting", "stressful", "disappointing", "to be safe", "in future", "unchanged")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0041_available_tonight"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
