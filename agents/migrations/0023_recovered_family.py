"""The default claim families change where they were left as installed: "has recovered", "back to
normal" and the like become the "recovered" family, which an incident in monitoring supports too
("fully recovered" stays the resolved incident's), and the two time families read "usually",
"typically", "normally" and "generally" as hedges.
"""

from django.db import migrations


def update_families(apps, schema_editor):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES
    from agents.policy_rows import claim_row_values

    using = schema_editor.connection.alias
    claim = apps.get_model("agents", "RestrictedClaim")
    if not claim.objects.using(using).exists():
        return  # an empty store gets every default from install_defaults
    defaults = {family.name: family for family in DEFAULT_CLAIM_FAMILIES}
    rows = claim.objects.using(using)
    # Only the family split off here is new; a default an admin deleted stays deleted.
    if rows.filter(family="recovery").exists() and not rows.filter(pattern=defaults["recovered"].pattern).exists():
        rows.create(**claim_row_values(defaults["recovered"], claim))
    for name in ("recovery", "time promises", "time commitments"):
        values = claim_row_values(defaults[name], claim)
        rows.filter(pattern=defaults[name].pattern, family=name).update(paraphrases=values["paraphrases"],
                                                                        hedges=values["hedges"])

class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0022_pipelinepolicy_judge"),
    ]

    operations = [
        migrations.RunPython(update_families, migrations.RunPython.noop),
    ]
