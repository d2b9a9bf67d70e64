"""A gift is no refund: "your next delivery fee is on us", "a complimentary month", "as a thank-you,
…" promise customers something the incident must announce, and an incident that refunds only what went
wrong does not. The "goodwill gifts" family (a liability claim, read for negation like money) joins the
default families. A store whose families were installed before gets the row; an empty store gets every
default from install_defaults."""

from django.db import migrations

NAMES = ("goodwill gifts",)


def add_families(apps, schema_editor):
    from agents.policy_rows import add_default_families

    add_default_families(apps, schema_editor, NAMES)


def remove_families(apps, schema_editor):
    from agents.policy_rows import remove_default_families

    remove_default_families(apps, schema_editor, NAMES)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0046_vocabulary_heads_up_and_be_assured"),
    ]

    operations = [
        migrations.RunPython(add_families, remove_families),
    ]
