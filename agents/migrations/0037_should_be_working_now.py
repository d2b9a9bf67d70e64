""""Everything should be working now" and "uploads should now succeed" say that the service works,
softened by "should": on an incident still being investigated they tell customers it is over. Two
paraphrases join the "working again" family, so the incident's state decides them as it decides
"uploads are working again". A row an admin changed (its canonical pattern) stays as it is.
"""

from django.db import migrations

FAMILY = "working again"


def _new_lines() -> list[str]:
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    family = next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == FAMILY)
    return [p for p in family.paraphrases if p.startswith(r"\bshould\s+")]


def _rows(apps, schema_editor):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    pattern = next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == FAMILY).pattern
    model = apps.get_model("agents", "RestrictedClaim")
    return model.objects.using(schema_editor.connection.alias).filter(family=FAMILY, pattern=pattern)


def forwards(apps, schema_editor):
    new = _new_lines()
    for row in _rows(apps, schema_editor):
        lines = [line for line in row.paraphrases.splitlines() if line.strip()]
        added = [line for line in new if line not in lines]
        if added:
            row.paraphrases = "\n".join([*lines, *added])
            row.save(update_fields=["paraphrases"])


def backwards(apps, schema_editor):
    new = set(_new_lines())
    for row in _rows(apps, schema_editor):
        lines = [line for line in row.paraphrases.splitlines() if line.strip()]
        if new & set(lines):
            row.paraphrases = "\n".join(line for line in lines if line not in new)
            row.save(update_fields=["paraphrases"])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0036_vocabulary_ordinary_words"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
