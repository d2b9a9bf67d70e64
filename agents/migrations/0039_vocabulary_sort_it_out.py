"""Two more lines of published updates that state nothing about an incident on their own: "we have
escalated this to the appropriate team" ("appropriate", a plain word) and "thanks for bearing with us
while we sort this out" ("sort this out", "sort it out" and their "-ing" forms, marked as the
company's action like "sort out"). A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("appropriate",)
ACTION = ("sort this out", "sort it out", "sorting this out", "sorting it out")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ACTION, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0038_vocabulary_alerted_and_working_hard"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
