from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reviewer', '0014_subscribe_skipped_deliveries_and_confirmations'),
    ]

    operations = [
        migrations.CreateModel(
            name='StatusSnapshot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('body', models.TextField()),
                ('content_type', models.CharField(max_length=100)),
                ('etag', models.CharField(max_length=80)),
                ('changed_at', models.DateTimeField()),
                ('generation', models.PositiveIntegerField(default=1)),
                ('built_generation', models.PositiveIntegerField(default=0)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
    ]
