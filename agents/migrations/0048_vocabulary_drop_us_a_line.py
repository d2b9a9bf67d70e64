"""More lines of support emails that state nothing about an incident on their own: "drop us a line",
"stop by any Guest Services desk", "heading out today?", "find a station nearby", "just let the team
know", "please run it again". A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("heading out",)
ADVICE = ("let", "nearby", "drop us a line", "stop by", "run it again", "run them again")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE, advice=ADVICE, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0047_goodwill_gifts_family"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
