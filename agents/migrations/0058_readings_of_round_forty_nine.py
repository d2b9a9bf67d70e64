"""What round 49 of published-style updates showed the guard should read as update language: "hit" as
"affected" is ("86 applications were hit by the failed uploads"), "reassure you", where the problem "lies"
("we know where the problem lies") as plain words and phrases, and "read more" as plain phrase and as
advice ("you can read more about how alerts work at …"). A store's own terms otherwise stay as its admins
left them."""

from django.db import migrations

PLAIN = ("hit", "reassure you", "where the problem lies", "where the issue lies", "where the fault lies")
ADVICE = ("read more",)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0057_readings_of_round_forty_six"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
