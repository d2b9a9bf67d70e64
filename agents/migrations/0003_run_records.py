"""Step 2 of 3 of the move of incidents and run records into this app (see reviewer 0003).

The tables exist already (renamed by reviewer 0003): the models are added to this app's state only.
The content types move too, so permissions and admin history stay attached to the same rows.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED = ("incident", "run", "tracestep", "modelcall", "review", "auditdiff")


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0002_policy_defaults'),
        ('reviewer', '0003_rename_run_record_tables'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    state_operations = [
        migrations.CreateModel(
            name='Incident',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('incident_id', models.SlugField(help_text='e.g. inc_pay_2041', max_length=64, unique=True)),
                ('title', models.CharField(max_length=200)),
                ('report_date', models.DateField(default=django.utils.timezone.localdate)),
                ('region', models.CharField(blank=True, max_length=32)),
                ('severity', models.CharField(blank=True, help_text='P0-P5', max_length=8)),
                ('status', models.CharField(blank=True, help_text='e.g. degraded, mitigated', max_length=200)),
                ('affected_checkout_pct', models.FloatField(blank=True, null=True)),
                ('failed_payment_rate', models.FloatField(blank=True, help_text='A ratio: 0.034 is 3.4%', null=True)),
                ('chargeback_alerts', models.PositiveIntegerField(blank=True, null=True)),
                ('eta_minutes', models.PositiveIntegerField(blank=True, null=True)),
                ('policy_hints', models.JSONField(blank=True, default=dict)),
                ('approved_actions', models.JSONField(blank=True, default=list)),
                ('key_messages', models.JSONField(blank=True, default=list, help_text='Sentences ops wants in the update')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['-report_date', 'incident_id'],
            },
        ),
        migrations.CreateModel(
            name='Run',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pipeline', models.CharField(choices=[('reflection', 'Reflection'), ('self_critique', 'Self-critique'), ('routing', 'Routing')], max_length=20)),
                ('goal', models.TextField()),
                ('context', models.JSONField(blank=True, default=dict)),
                ('policy', models.JSONField(default=dict)),
                ('model_label', models.CharField(blank=True, max_length=200)),
                ('endpoint', models.CharField(blank=True, max_length=300)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('ok', 'Ok'), ('stopped', 'Stopped'), ('interrupted', 'Interrupted')], default='queued', max_length=12)),
                ('stop_reason', models.CharField(blank=True, max_length=200)),
                ('phase', models.CharField(blank=True, max_length=20)),
                ('outcome', models.CharField(blank=True, max_length=40)),
                ('answer', models.TextField(blank=True)),
                ('selected_route', models.CharField(blank=True, max_length=100)),
                ('escalation_reason', models.TextField(blank=True)),
                ('candidate', models.TextField(blank=True)),
                ('guard', models.JSONField(blank=True, null=True)),
                ('details', models.JSONField(blank=True, default=dict)),
                ('idempotency_key', models.CharField(blank=True, max_length=200)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                ('worker', models.CharField(blank=True, max_length=200)),
                ('deliveries', models.PositiveIntegerField(default=0)),
                ('duration_ms', models.FloatField(blank=True, null=True)),
                ('model_calls', models.PositiveIntegerField(default=0)),
                ('prompt_tokens', models.PositiveIntegerField(default=0)),
                ('completion_tokens', models.PositiveIntegerField(default=0)),
                ('cost', models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                ('incident', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='agents.incident')),
                ('retry_of', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='retries', to='agents.run')),
                ('triggered_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='runs', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'permissions': [('start_run', 'Can start pipeline runs')],
            },
        ),
        migrations.CreateModel(
            name='Review',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('review', 'Review'), ('critique', 'Critique')], max_length=10)),
                ('decision', models.CharField(max_length=20)),
                ('severity', models.CharField(blank=True, max_length=10)),
                ('issues', models.JSONField(blank=True, default=list)),
                ('instructions', models.JSONField(blank=True, default=list)),
                ('reason', models.TextField(blank=True)),
                ('quality', models.CharField(blank=True, max_length=20)),
                ('completeness', models.CharField(blank=True, max_length=20)),
                ('run', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='review', to='agents.run')),
            ],
        ),
        migrations.CreateModel(
            name='ModelCall',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('stage', models.CharField(max_length=20)),
                ('attempt', models.PositiveIntegerField(default=1)),
                ('try_number', models.PositiveIntegerField(default=1)),
                ('delivery', models.PositiveIntegerField(default=1)),
                ('model', models.CharField(max_length=200)),
                ('latency_ms', models.FloatField(default=0)),
                ('prompt_tokens', models.PositiveIntegerField(default=0)),
                ('completion_tokens', models.PositiveIntegerField(default=0)),
                ('outcome', models.CharField(default='ok', max_length=200)),
                ('raw', models.TextField(blank=True)),
                ('error', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calls', to='agents.run')),
            ],
            options={
                'ordering': ['run', 'id'],
            },
        ),
        migrations.CreateModel(
            name='AuditDiff',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('before_text', models.TextField()),
                ('after_text', models.TextField()),
                ('changed', models.BooleanField()),
                ('before_hash', models.CharField(max_length=12)),
                ('after_hash', models.CharField(max_length=12)),
                ('before_chars', models.PositiveIntegerField()),
                ('after_chars', models.PositiveIntegerField()),
                ('delta', models.IntegerField()),
                ('length_increase_pct', models.FloatField()),
                ('risks_count', models.PositiveIntegerField(default=0)),
                ('required_changes_count', models.PositiveIntegerField(default=0)),
                ('diff_unit', models.CharField(max_length=10)),
                ('unified_diff', models.TextField(blank=True)),
                ('diff_excerpt', models.JSONField(blank=True, default=list)),
                ('run', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='audit', to='agents.run')),
            ],
        ),
        migrations.CreateModel(
            name='TraceStep',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('index', models.PositiveIntegerField()),
                ('phase', models.CharField(max_length=20)),
                ('status', models.CharField(max_length=12)),
                ('stop_reason', models.CharField(blank=True, max_length=200)),
                ('decision', models.CharField(blank=True, max_length=20)),
                ('duration_ms', models.FloatField(default=0)),
                ('measurements', models.JSONField(blank=True, default=dict)),
                ('output', models.JSONField(blank=True, null=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='steps', to='agents.run')),
            ],
            options={
                'ordering': ['run', 'index'],
            },
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['incident', '-created_at'], name='run_incident_newest'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['stop_reason', '-created_at'], name='run_stop_reason_newest'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['status', 'heartbeat_at'], name='run_status_heartbeat'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['-created_at'], name='run_newest'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['created_at', 'status', 'stop_reason'], name='run_window_counts'),
        ),
        migrations.AddConstraint(
            model_name='run',
            constraint=models.UniqueConstraint(condition=models.Q(('idempotency_key', ''), _negated=True), fields=('triggered_by', 'idempotency_key'), name='run_idempotency_key_per_user'),
        ),
        migrations.AddConstraint(
            model_name='tracestep',
            constraint=models.UniqueConstraint(fields=('run', 'index'), name='trace_step_once'),
        ),
    ]


def move_content_types(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for name in MOVED:
        if not ContentType.objects.using(db).filter(app_label="agents", model=name).exists():
            ContentType.objects.using(db).filter(app_label="reviewer", model=name).update(app_label="agents")


def content_types_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(
        app_label="agents", model__in=MOVED).update(app_label="reviewer")


Migration.operations = [
    migrations.SeparateDatabaseAndState(state_operations=Migration.state_operations),
    migrations.RunPython(move_content_types, content_types_back),
]
