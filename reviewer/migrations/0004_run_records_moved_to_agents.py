"""Step 3 of 3 of the move (see 0003): the moved models leave this app's state; no table changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0003_run_records'),
        ('reviewer', '0003_rename_run_record_tables'),
    ]

    state_operations = [
        migrations.RemoveField(
            model_name='run',
            name='incident',
        ),
        migrations.RemoveField(
            model_name='modelcall',
            name='run',
        ),
        migrations.RemoveField(
            model_name='review',
            name='run',
        ),
        migrations.RemoveField(
            model_name='run',
            name='retry_of',
        ),
        migrations.RemoveField(
            model_name='run',
            name='triggered_by',
        ),
        migrations.AlterField(
            model_name='escalation',
            name='run',
            field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='escalation', to='agents.run'),
        ),
        migrations.RemoveField(
            model_name='tracestep',
            name='run',
        ),
        migrations.DeleteModel(
            name='AuditDiff',
        ),
        migrations.DeleteModel(
            name='Incident',
        ),
        migrations.DeleteModel(
            name='ModelCall',
        ),
        migrations.DeleteModel(
            name='Review',
        ),
        migrations.DeleteModel(
            name='Run',
        ),
        migrations.DeleteModel(
            name='TraceStep',
        ),
    ]


Migration.operations = [migrations.SeparateDatabaseAndState(state_operations=Migration.state_operations)]
