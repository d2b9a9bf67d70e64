"""The grounding vocabulary grown by plain words real published updates use that state nothing about an
incident: a framing adverb without its comma ("Unfortunately the issue has come back"), words of
sequence and measure ("thereafter", "enough", "normal ranges"), "utilize" for "use", an
approach ("strategies"), how a situation develops ("evolving"), and idioms for working on it ("all hands
on deck", "figure out"). The sentence's other words still need the incident. A store's own terms stay
as its admins left them."""

from django.db import migrations

ADDED = (
    "unfortunately", "thereafter", "evolve", "evolves", "evolved", "evolving", "enough", "range", "ranges",
    "utilize", "utilizes", "utilized", "utilizing", "strategy", "strategies", "all hands on deck", "figure out",
    "figuring out", "figured out", "anything else", "negative effect", "negative impact",
)


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, ADDED)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0033_lifecycle_families"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
