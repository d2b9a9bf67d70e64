""""Fixed", "solved", "remedied" and "rectified" move from the "resolution" family to "fix in place":
they say a fix is in, which a monitoring incident supports as well as a resolved one, and which the
incident's facts support when they record the fix. As "resolution" words, a policy that avoids
guarantees refused them on every incident not yet resolved ("the fault has been fixed; we are
monitoring"). The two rows' notes follow where they are as installed. Rows an admin changed stay as
they are.
"""

from django.db import migrations

WORDS = r"\b(?:fixed|solved|remedied|rectified)\b"
NOTES = {  # family: (the note as installed before, the note now)
    "resolution": ("“resolved” while it is not, and “fixed”, “the outage is over”…",
                   "“resolved” while it is not, “the outage is over”…"),
    "fix in place": ("“a fix has been implemented”, “monitoring the results”… before it is monitoring.",
                     "“fixed”, “a fix has been implemented”, “monitoring the results”… before it is monitoring, "
                     "unless a fact says the fix is in."),
}


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _move(apps, schema_editor, source: str, target: str, forwards: bool):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    defaults = {family.name: family for family in DEFAULT_CLAIM_FAMILIES}
    rows = apps.get_model("agents", "RestrictedClaim").objects.using(schema_editor.connection.alias)
    moved = False
    for row in rows.filter(family=source, pattern=defaults[source].pattern):
        lines = _lines(row.paraphrases)
        if WORDS in lines:
            row.paraphrases = "\n".join(line for line in lines if line != WORDS)
            row.save(update_fields=["paraphrases"])
            moved = True
    if not moved:
        return  # the words were not where the defaults put them: an admin's choice stays
    for row in rows.filter(family=target, pattern=defaults[target].pattern):
        lines = _lines(row.paraphrases)
        if WORDS not in lines:
            row.paraphrases = "\n".join([*lines, WORDS])
            row.save(update_fields=["paraphrases"])
    for family, (before, now) in NOTES.items():
        old, new = (before, now) if forwards else (now, before)
        rows.filter(family=family, pattern=defaults[family].pattern, note=old).update(note=new)


def forwards(apps, schema_editor):
    _move(apps, schema_editor, "resolution", "fix in place", forwards=True)


def backwards(apps, schema_editor):
    _move(apps, schema_editor, "fix in place", "resolution", forwards=False)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0034_vocabulary_plain_words"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
