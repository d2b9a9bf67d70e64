"""The grounding vocabulary grown by the words real updates use to describe what customers see and who
they are, found by reading sample updates written in the style of published status pages: symptoms
("choppy", "stale", "unresponsive"), what a team does ("pinpointed", "rebuilding", "reindexing"), what is
on a screen ("audio", "images", "documents") and the people using it ("participants", "shoppers"), and
the advice to start something again. None of them says what happened or what will happen on its own:
the sentence's other words still need the incident. A store's own terms stay as its admins left them."""

from django.db import migrations

ADDED = (
    'attendees', 'audio', 'broken', 'buyers', 'callers', 'choppy', 'distorted', 'document', 'documents',
    'edit', 'edited', 'editing', 'edits', 'empty', 'erratic', 'flaky', 'frozen', 'garbled', 'glitches',
    'guests', 'hanging', 'image', 'images', 'inaccessible', 'inconsistent', 'outdated', 'participants',
    'photo', 'photos', 'picture', 'pictures', 'pinpoint', 'pinpointed', 'propagate', 'propagated',
    'propagating', 'readers', 'rebuild', 'rebuilding', 'rebuilt', 'reindex', 'reindexed', 'reindexing',
    'render', 'rendered', 'rendering', 'reprocess', 'reprocessed', 'reprocessing', 'shoppers', 'sluggish',
    'sound', 'stale', 'start again', 'start it again', 'stuck', 'text', 'thing', 'things',
    'unreachable', 'unresponsive', 'video', 'wrong',
)

ADVICE = ('start again', 'start it again')


def grow(apps, schema_editor):
    term = apps.get_model("agents", "GroundingTerm")
    rows = term.objects.using(schema_editor.connection.alias)
    if not rows.exists():
        return  # an empty store gets the whole list from install_defaults after migrating
    have = set(rows.values_list("text", flat=True))
    rows.bulk_create(term(text=text, advice=text in ADVICE) for text in ADDED if text not in have)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0028_incident_components"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
