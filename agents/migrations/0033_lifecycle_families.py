"""Four state claims about where the incident is in its lifecycle join the default claim families:
"fix under way" ("a fix is being rolled out", "we have identified why"), which an incident still being
investigated does not support; "fix in place" ("a fix has been implemented", "monitoring the results"),
which only a monitoring or resolved incident supports; "not yet closed" ("before closing this
incident"), which a resolved incident does not; and "why unknown" ("we are still looking into why"),
which only an incident still being investigated supports. A store whose families were installed
before gets the four rows; an empty store gets every default from install_defaults.
"""

from django.db import migrations

NAMES = ("fix under way", "fix in place", "not yet closed", "why unknown")


def add_families(apps, schema_editor):
    from agents.policy_rows import add_default_families

    add_default_families(apps, schema_editor, NAMES)


def remove_families(apps, schema_editor):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    patterns = {family.pattern for family in DEFAULT_CLAIM_FAMILIES if family.name in NAMES}
    rows = apps.get_model("agents", "RestrictedClaim").objects.using(schema_editor.connection.alias)
    rows.filter(family__in=NAMES, pattern__in=patterns).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0032_grounding_actions"),
    ]

    operations = [
        migrations.RunPython(add_families, remove_families),
    ]
