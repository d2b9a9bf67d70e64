"""The contract's defaults as rows: one active policy per pipeline and the shared lists.

The values come from agents.core.policy (through agents.policy_rows.install_defaults), so the dataclasses
stay the one source of the contract's defaults.
"""

from django.db import migrations


def create_defaults(apps, schema_editor):
    from agents.policy_rows import install_defaults

    install_defaults(apps, using=schema_editor.connection.alias)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0001_initial"),
    ]

    operations = [
        # Going back leaves the rows alone: they may have been edited since.
        migrations.RunPython(create_defaults, migrations.RunPython.noop),
    ]
