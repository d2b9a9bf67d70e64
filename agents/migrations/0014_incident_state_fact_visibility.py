from django.db import migrations, models

from agents.models.incidents import state_for_status


def states_from_status(apps, schema_editor):
    """Each incident's state, read from its free-text status (the rule is ``state_for_status``)."""
    Incident = apps.get_model("agents", "Incident")
    for incident in Incident.objects.only("pk", "status").iterator():
        state = state_for_status(incident.status)
        if state != "investigating":
            Incident.objects.filter(pk=incident.pk).update(state=state)


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0013_run_page_queries'),
    ]

    operations = [
        migrations.AddField(
            model_name='incident',
            name='state',
            field=models.CharField(choices=[('investigating', 'Investigating'), ('identified', 'Identified'), ('monitoring', 'Monitoring'), ('resolved', 'Resolved')], default='investigating', help_text='Where the incident is in its lifecycle, as a status page names it', max_length=16),
        ),
        migrations.AddField(
            model_name='incidentfact',
            name='visibility',
            field=models.CharField(choices=[('public', 'Public'), ('internal', 'Internal')], default='public', help_text='Internal: for people and the reviewer, never words for customers', max_length=8),
        ),
        migrations.RunPython(states_from_status, migrations.RunPython.noop),
    ]
