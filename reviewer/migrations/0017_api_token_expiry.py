"""API tokens expire: a token made before gets API_TOKEN_DAYS from now (not from when it was made,
so no client loses its token the day this is deployed)."""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def expire_existing(apps, schema_editor):
    ApiToken = apps.get_model("reviewer", "ApiToken")
    ApiToken.objects.filter(expires_at__isnull=True).update(
        expires_at=timezone.now() + timedelta(days=settings.API_TOKEN_DAYS))


class Migration(migrations.Migration):

    dependencies = [
        ("reviewer", "0016_delivery_held"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(null=True, editable=False),
        ),
        migrations.RunPython(expire_existing, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(editable=False, help_text="API_TOKEN_DAYS after it was made."),
        ),
    ]
