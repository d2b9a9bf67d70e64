"""What round 63 of published-style updates showed the guard should read as update language: whom an update
addresses ("camera owners", "homes in AV3"), where a refund's timing depends on ("depending on your bank"),
"per cent" as British updates spell it, and "be patient", also as advice ("please be patient if it takes a few
seconds"). A store's own terms stay as its admins left them."""

from django.db import migrations

TERMS = ("owners", "homes", "depending on your bank", "depending on your card issuer",
         "depending on your card provider", "depending on your bank or card issuer", "be patient", "per cent")
ADVICE = ("be patient",)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, TERMS, advice=ADVICE)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0070_readings_of_rounds_sixty_to_sixty_two"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
