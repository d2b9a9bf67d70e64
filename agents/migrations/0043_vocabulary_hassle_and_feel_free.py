"""More lines of published updates and support emails that state nothing about an incident on their
own: "sorry for the hassle", "especially at this time of year", "sorry for any mix-ups", "feel free to
get in touch", "please check back here", "try again a little later", "we'll get back to you", "once
we've wrapped up our review", "we're working to get this sorted", "thanks for bearing with us", "we're
sorry to have let you down", "if you didn't get the chance to..."; and "we'd recommend" (suggest,
advise, encourage), advice words marked as the company's action too: recommending is no work on
customers' things. A store's own terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("hassle", "especially", "chance", "time of year", "mix-up", "mix-ups", "bearing with us", "let you down")
ADVICE = ("feel free", "check back", "a little")
ACTION = ("recommend", "suggest", "advise", "encourage", "get back to you", "wrap up", "wrapped up", "wrapping up",
          "get this sorted", "get it sorted")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ADVICE + ACTION, advice=ADVICE, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0042_vocabulary_otherwise_and_feelings"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
