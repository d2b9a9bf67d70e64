"""More lines of published updates that state nothing about an incident on their own: "a quick
heads-up", "Dear instructors", "please be assured that ..." (the statement after it is read as one),
"orders will be processed in the order they arrived", "delayed campaigns will still go out" (marked as
the company's action too), "give us a call at …", "keep going with your lessons", "a charge you don't
recognise", "this could create duplicates", "call our member services team"; and "reported", marked as
what the company may say it has seen ("this has been reported at properties in the US"). A store's own
terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("recognise", "recognize", "create", "creates", "created", "heads-up", "heads up", "be assured", "dear",
         "arrive", "arrives", "arrived", "arriving")
ADVICE = ("services", "keep going", "give us a call")
GOING_OUT = ("go out", "goes out", "going out", "went out", "gone out")
ACTION = ("report", "reported", "reporting")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE + ACTION + GOING_OUT, advice=ADVICE,
                      action=ACTION + GOING_OUT, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0045_vocabulary_greetings_and_head_to"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
