"""The grounding vocabulary grown by ordinary words of published updates that state nothing about an
incident on their own: framing ("please note", "as a precaution", "depending on your bank", "if you
are unsure"), manner ("rather", "simply", "a little later", "as normal", "mid-trip"), what a team does
while it works ("we are checking whether", "we are treating this as a priority", "reversing the
change": marked as the company's actions, as 0032 marked its terms), and where customers may be told
to follow what happens ("track it in the activity log", "follow its progress", "you can keep
listening": marked as advice). The sentence's other words still need the incident. A store's own
terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("note", "noted", "rather", "simply", "little", "precaution", "precautionary", "depending", "think",
         "unsure", "mid", "http", "https", "someone else")
ACTION = ("check", "checking", "checked", "reverse", "reversed", "reversing", "treat", "treated", "treating")
ADVICE = ("track", "progress", "keep", "as normal")


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ACTION + ADVICE, advice=ADVICE, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0035_fixed_is_a_fix_in_place"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
