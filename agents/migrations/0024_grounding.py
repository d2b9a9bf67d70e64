"""Grounding: the vocabulary's table and its first terms (agents.core.vocabulary), and a policy
switch for the grounding check.
"""

from django.db import migrations, models


def install(apps, schema_editor):
    from agents.policy_rows import install_vocabulary

    using = schema_editor.connection.alias
    if apps.get_model("agents", "RestrictedClaim").objects.using(using).exists():
        install_vocabulary(apps, using)  # an empty store gets every default from install_defaults


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0023_recovered_family'),
    ]

    operations = [
        migrations.CreateModel(
            name='GroundingTerm',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('text', models.CharField(help_text='One word, or a phrase of up to eight words (a phrase licenses its words only together: “back to normal”). Letters, spaces, apostrophes and hyphens.', max_length=120, unique=True)),
                ('advice', models.BooleanField(default=False, help_text='On: it may also stand in a sentence that tells customers what to do (“contact support”). Off: advice built on it needs an approved action.')),
                ('enabled', models.BooleanField(default=True, help_text='Off: the grounding check does not read it.')),
                ('note', models.CharField(blank=True, help_text='Why it is ordinary language (for reviewers).', max_length=200)),
            ],
            options={
                'ordering': ['text'],
            },
        ),
        migrations.AddField(
            model_name='pipelinepolicy',
            name='grounding',
            field=models.BooleanField(default=False, help_text='Off by default. Switched on, every sentence of a customer-facing text must be supported by the incident (its public facts, key messages, approved actions, the goal) or by the grounding vocabulary; a sentence that states anything else stops as unsupported_statement and goes to a person.'),
        ),
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
