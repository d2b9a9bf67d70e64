"""Grounding on for every policy: the switch's default becomes on, and the policies stored with it
off (the default of 0024) are switched on; an admin may switch a policy off again."""

from django.db import migrations, models


def switch_on(apps, schema_editor):
    policy = apps.get_model("agents", "PipelinePolicy")
    policy.objects.using(schema_editor.connection.alias).update(grounding=True)


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0024_grounding'),
    ]

    operations = [
        migrations.AlterField(
            model_name='pipelinepolicy',
            name='grounding',
            field=models.BooleanField(default=True, help_text='On by default: every sentence of a customer-facing text must be supported by the incident (its public facts, key messages, approved actions, the goal) or by the grounding vocabulary; a sentence that states anything else stops as unsupported_statement and goes to a person. Off: only the named checks read the text.'),
        ),
        migrations.RunPython(switch_on, migrations.RunPython.noop),
    ]
