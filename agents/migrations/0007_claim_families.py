"""Claim families: a restricted claim is a canonical pattern plus paraphrases, its own
hedge words and whether it applies only under avoid_absolute_guarantees; a region token has its
names in words. The defaults become data: the four contract claims gain their paraphrases, and the
guarantee, absolute-assurance and time-promise families are added. A default row an admin deleted
is not brought back; one an admin gave paraphrases is left as it is.
"""

from django.db import migrations, models


def fill_families(apps, schema_editor):
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES, DEFAULT_REGION_WORDS
    from agents.policy_rows import claim_row_values

    using = schema_editor.connection.alias
    claim = apps.get_model("agents", "RestrictedClaim")
    region = apps.get_model("agents", "RegionToken")
    contract = {r"\bresolved\b", r"\bfully\s+recovered\b", r"\bincident\s+closed\b",
                r"\ball\s+payments\s+(?:are|is)\s+stable\b"}
    for family in DEFAULT_CLAIM_FAMILIES:
        values = claim_row_values(family, claim)
        row = claim.objects.using(using).filter(pattern=family.pattern).first()
        if row is None:
            if family.pattern not in contract:  # new defaults; a deleted contract claim stays deleted
                claim.objects.using(using).create(**values)
        elif not row.paraphrases and not row.family:
            for name in ("family", "paraphrases", "hedges", "strict_only"):
                setattr(row, name, values[name])
            row.save(using=using)
    for token, words in DEFAULT_REGION_WORDS.items():
        region.objects.using(using).filter(token=token, words="").update(words=", ".join(words))


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0006_model_call_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="restrictedclaim", name="family",
            field=models.CharField(blank=True, max_length=80, help_text="The family's name, shown with every violation (e.g. “recovery”). Blank: the canonical pattern."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="paraphrases",
            field=models.TextField(blank=True, help_text="Other wordings and inflections of the same claim: one RE2 pattern a line, each checked like the canonical one, with the same hedge handling (“not yet fixed” is not the claim)."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="hedges",
            field=models.CharField(blank=True, max_length=500, help_text="Extra words that hedge this family only, comma-separated, read before the claim and inside it (e.g. estimate, about, expect for time promises)."),
        ),
        migrations.AddField(
            model_name="restrictedclaim", name="strict_only",
            field=models.BooleanField(default=False, help_text="Check this family only when the context asks to avoid absolute guarantees."),
        ),
        migrations.AddField(
            model_name="regiontoken", name="words",
            field=models.CharField(blank=True, max_length=300, help_text="The region's names in words and adjectives, comma-separated (e.g. Europe, European); a mention of one is a mention of the region."),
        ),
        migrations.AlterField(
            model_name="restrictedclaim", name="pattern",
            field=models.CharField(help_text="Case-insensitive, in RE2 syntax (matched in linear time): e.g. \\bfully\\s+recovered\\b. Lookarounds, backreferences and possessive quantifiers are refused; write \\z, not \\Z.", max_length=500, unique=True, verbose_name="canonical claim"),
        ),
        migrations.RunPython(fill_families, migrations.RunPython.noop),
    ]
