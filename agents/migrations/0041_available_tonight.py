""""Version 8.3.1 with the fix will be available on Google Play tonight" gives a time for the fix as
surely as "by tonight": a paraphrase joins the "time commitments" family (a fix, a release or a
recovery said to come today, tonight, tomorrow or this morning, afternoon or evening), so it passes
only where the incident gives that time. A row an admin changed (its canonical pattern) stays as it is.
"""

from django.db import migrations

FAMILY = "time commitments"


def _new_lines() -> list[str]:
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    family = next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == FAMILY)
    return [p for p in family.paraphrases if "tonight|tomorrow" in p and "live|" in p]


def forwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases

    add_paraphrases(apps, schema_editor, FAMILY, _new_lines())


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, FAMILY, _new_lines())


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0040_vocabulary_sizes_and_back_to_usual"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
