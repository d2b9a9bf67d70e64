"""Claim kinds: a claim family says which check it fails (its stop reason), what supports it (the
evidence, the incident's state, a sentence about the next update), which other patterns in the facts
support it, and whether only a negation hedges it. The default families get their support, and the
new families (the incident's state, money and blame, customers' data, time commitments) are added
unless a row with the same pattern exists.
"""

from django.db import migrations, models

from agents.core.policy import CLAIM_CHECKS, HEDGING, SUPPORTS


def add_kinds(apps, schema_editor):
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
            if family.check != "restricted_claims":
                claim.objects.using(using).create(**values)
        elif row.family == family.name:  # a default row (maybe made before these columns): its kind
            kind = {name: values[name] for name in ("kind", "support", "supported_by", "hedging")}
            claim.objects.using(using).filter(pk=row.pk).update(**kind)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0014_incident_state_fact_visibility"),
    ]

    operations = [
        migrations.AddField(
            model_name="restrictedclaim", name="kind",
            field=models.CharField(verbose_name="check", choices=list(CLAIM_CHECKS.items()), default="restricted_claims", max_length=32, help_text="The check a match fails: its stop reason is patch_violation:<check> on a revision and invalid_answer:<check> on a final answer, and the lead sees it under this name."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="support",
            field=models.CharField(choices=list(SUPPORTS.items()), default="evidence", max_length=16, help_text="What lets a match pass: the incident's facts making the same claim (always), or the incident's state as well (resolved, monitoring), or a sentence about the next update (time)."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="supported_by",
            field=models.TextField(blank=True, verbose_name="also supported by", help_text="Patterns that, found unhedged in the incident's facts, support the claim too: one RE2 pattern a line (e.g. \\bmaintenance\\b for “planned outage”). Each fact is also read as “Label: value”."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="hedging",
            field=models.CharField(choices=list(HEDGING.items()), default="any", max_length=16, help_text="What lets a match pass as not asserted. Money and blame use “only a negation”: “if you were charged twice, we will refund you” is still a promise."),
        ),
        migrations.RunPython(add_kinds, migrations.RunPython.noop),
    ]
