"""What rounds of published-style updates showed the guard should read as update language: "the whole
time", "as always", "you can safely ignore them", "whichever suits you best", "no fun", "a quick tip",
"a bit later", "your loved ones"; and as advice also "carry on" ("you can carry on using the same code"),
"safely ignore", "a bit" and "as always" ("As always, please verify wire instructions …"). A store's own
terms otherwise stay as its admins left them; "carry on", held as a plain phrase, may now advise too."""

from django.db import migrations

PLAIN = ("the whole time", "as always", "safely ignore", "whichever suits you", "suits you", "no fun", "quick tip",
         "a bit", "loved ones")
ADVICE = ("carry on", "carrying on", "safely ignore", "a bit", "as always")


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, tuple(dict.fromkeys(PLAIN + ADVICE)), advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0051_readings_of_round_fifteen"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
