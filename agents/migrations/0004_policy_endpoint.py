"""A policy chooses a declared model endpoint by name; the free base URL field goes.

A blank base URL becomes a blank endpoint: the ``default`` endpoint (OPENAI_BASE_URL with
OPENAI_API_KEY), where such rows already sent their calls. A row that had a base URL cannot keep
it: a URL is exactly what an admin must no longer choose. It gets the endpoint name ``legacy``,
which fails closed (``llm_misconfigured``, no request) until the operator declares
``legacy=<that URL>|<KEY VARIABLE>`` in LLM_ENDPOINTS or an admin picks a declared endpoint; the
old URL is kept in the policy's history of changes so nobody has to guess it.
"""

import django.core.validators
from django.db import migrations, models

LEGACY_ENDPOINT = "legacy"


def base_url_to_endpoint(apps, schema_editor):
    alias = schema_editor.connection.alias
    PipelinePolicy = apps.get_model("agents", "PipelinePolicy")
    PolicyChange = apps.get_model("agents", "PolicyChange")
    for policy in PipelinePolicy.objects.using(alias).exclude(base_url=""):
        PolicyChange.objects.using(alias).create(
            model_label="agents.pipelinepolicy", object_id=str(policy.pk),
            object_repr=f"{policy.pipeline}: {policy.name}"[:200], policy=policy, action="changed",
            username="migration 0004",
            before={"base_url": policy.base_url, "endpoint": ""},
            after={"base_url": None, "endpoint": LEGACY_ENDPOINT},
        )
        policy.endpoint = LEGACY_ENDPOINT
        policy.save(update_fields=["endpoint"])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0003_run_records"),
    ]

    operations = [
        migrations.AddField(
            model_name="pipelinepolicy",
            name="endpoint",
            field=models.CharField(
                blank=True,
                help_text="One of the endpoints the operator declared (LLM_ENDPOINTS; OPENAI_BASE_URL and "
                "OPENAI_API_KEY declare “default”). Blank: default.",
                max_length=50,
                validators=[django.core.validators.RegexValidator(
                    "^[a-z0-9][a-z0-9_-]{0,49}$",
                    "An endpoint name: lower-case letters, digits, '-' and '_', at most 50 characters.")],
            ),
        ),
        # Going back leaves every row on the default endpoint: the URL is in the history of changes.
        migrations.RunPython(base_url_to_endpoint, migrations.RunPython.noop),
        migrations.RemoveField(model_name="pipelinepolicy", name="base_url"),
    ]
