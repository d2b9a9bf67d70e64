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
    for family in DEFAULT_CLAIM_FAMILIES:
        values = claim_row_values(family, claim)
        row = claim.objects.using(using).filter(pattern=family.pattern).first()
        if row is None:
            # Only the family split off here is new; a default an admin deleted stays deleted.
            if family.name == "recovered" and claim.objects.using(using).filter(family="recovery").exists():
                claim.objects.using(using).create(**values)
        elif row.family == family.name and family.name in ("recovery", "time promises", "time commitments"):
            claim.objects.using(using).filter(pk=row.pk).update(paraphrases=values["paraphrases"],
                                                                 hedges=values["hedges"])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0022_pipelinepolicy_judge"),
    ]

    operations = [
        migrations.RunPython(update_families, migrations.RunPython.noop),
    ]
