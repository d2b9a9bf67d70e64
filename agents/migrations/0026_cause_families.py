"""Two state claims about the cause join the default claim families: "cause unknown" ("we are working
to identify the cause"), which only an incident still being investigated supports, and "cause
identified", which an incident still being investigated does not. A store whose families were
installed before gets both rows; an empty store gets every default from install_defaults.
"""

from django.db import migrations


def add_families(apps, schema_editor):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES
    from agents.policy_rows import claim_row_values

    using = schema_editor.connection.alias
    claim = apps.get_model("agents", "RestrictedClaim")
    rows = claim.objects.using(using)
    if not rows.exists():
        return
    defaults = {family.name: family for family in DEFAULT_CLAIM_FAMILIES}
    for name in ("cause unknown", "cause identified"):
        if not rows.filter(pattern=defaults[name].pattern).exists():
            rows.create(**claim_row_values(defaults[name], claim))


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0025_grounding_on"),
    ]

    operations = [
        migrations.RunPython(add_families, migrations.RunPython.noop),
    ]
