"""The policy stamp (agents/policy_stamp.py): its one-row table. The triggers that write it are made by the
post_migrate hook after every migrate, so that a table SQLite rebuilds gets them back; migrating back
drops them first, as they write into this table."""

from django.db import migrations, models


def drop_triggers(apps, schema_editor):
    from agents.policy_stamp import drop_triggers

    drop_triggers(schema_editor.connection.alias)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0029_vocabulary_symptoms"),
    ]

    operations = [
        migrations.CreateModel(
            name="PolicyStamp",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("stamp", models.BigIntegerField()),
            ],
        ),
        migrations.RunPython(migrations.RunPython.noop, drop_triggers),
    ]
