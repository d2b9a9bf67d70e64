"""What round 51 of published-style updates showed: "it's sorted now" says the service works again, in
everyday words, as "all sorted" does. It joins the "working again" family (only a recovering or resolved
incident supports it) and, as a plain phrase, the vocabulary, so a resolved incident's update may say it.
The people a public service writes to ("we'll email each of those residents their reference") join as
plain words, as "customers" and "patients" did. A family whose patterns its admins changed, and a store's
own terms, stay as they left them."""

from django.db import migrations

PLAIN = ("it's sorted", "it’s sorted", "is sorted", "are sorted", "been sorted", "sorted now", "sorted out")
PEOPLE = ("residents", "tenants", "subscribers", "passengers", "travellers", "travelers", "visitors", "households")


def _line() -> str:
    from agents.core.policy import SORTED

    return SORTED


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms, add_paraphrases

    add_paraphrases(apps, schema_editor, "working again", [_line()])
    add_default_terms(apps, schema_editor, PLAIN + PEOPLE)


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, "working again", [_line()])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0060_this_is_now_closed"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
