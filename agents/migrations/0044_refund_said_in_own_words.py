"""The "credits and refunds" family is supported where the incident says the money in its own words
("will have their collection charge refunded", "skip this month's box with no charge"), not only in
the family's patterns. A row an admin changed (its canonical pattern) stays as it is."""

from django.db import migrations

FAMILY = "credits and refunds"


def _new_lines() -> list[str]:
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    return list(next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == FAMILY).supported_by)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    add_paraphrases(apps, schema_editor, FAMILY, _new_lines(), field="supported_by")


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, FAMILY, _new_lines(), field="supported_by")


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0043_vocabulary_hassle_and_feel_free"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
