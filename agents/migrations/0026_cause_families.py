"""Two state claims about the cause join the default claim families: "cause unknown" ("we are working
to identify the cause"), which only an incident still being investigated supports, and "cause
identified", which an incident still being investigated does not. A store whose families were
installed before gets both rows; an empty store gets every default from install_defaults.
"""

from django.db import migrations


def add_families(apps, schema_editor):
    from agents.policy_rows import add_default_families

    add_default_families(apps, schema_editor, ("cause unknown", "cause identified"))


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0025_grounding_on"),
    ]

    operations = [
        migrations.RunPython(add_families, migrations.RunPython.noop),
    ]
