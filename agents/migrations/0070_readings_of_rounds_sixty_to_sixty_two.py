"""What rounds 60 to 62 of published-style updates showed the guard should read as update language, also as
advice: "take a moment" and "allow a little time" ("please allow a little time before following up with
guests"). And a fact that records the fix by its key or label ("Fix applied: 11:20 GMT") says a fix is in
place: the "fix in place" family's new paraphrase, which a context without a lifecycle state reads as its
support. A store's own terms, and a family whose pattern its admins changed, stay as they left them."""

from django.db import migrations

ADVICE = ("take a moment", "allow a little time", "allow some time")


def forwards(apps, schema_editor):
    from agents.core.policy import FIX_APPLIED
    from agents.policy_rows import add_default_terms, add_paraphrases

    add_default_terms(apps, schema_editor, ADVICE, advice=ADVICE, mark_held=True)
    add_paraphrases(apps, schema_editor, "fix in place", [FIX_APPLIED])


def backwards(apps, schema_editor):
    from agents.core.policy import FIX_APPLIED
    from agents.policy_rows import remove_paraphrases

    remove_paraphrases(apps, schema_editor, "fix in place", [FIX_APPLIED])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0069_readings_of_round_fifty_nine"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
