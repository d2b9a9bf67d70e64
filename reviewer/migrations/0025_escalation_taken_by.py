# The lock on an escalation is "taken", not "claimed": a claim is what a customer-facing text asserts.

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('reviewer', '0024_delivery_evidence'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(model_name='escalation', name='escalation_claimed_by_age'),
        migrations.RenameField(model_name='escalation', old_name='claimed_by', new_name='taken_by'),
        migrations.RenameField(model_name='escalation', old_name='claimed_at', new_name='taken_at'),
        migrations.AlterField(
            model_name='escalation',
            name='taken_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name='taken_escalations', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddIndex(
            model_name='escalation',
            index=models.Index(fields=['status', 'taken_by', 'opened_at'], name='escalation_taken_by_age'),
        ),
    ]
