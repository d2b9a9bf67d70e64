"""Lines of published updates that state nothing about an incident on their own: "uploads of all sizes
are succeeding again" ("size", "sizes"), "disk latency is back to expected levels" and its kin ("back
to usual", "back to its usual", "back to typical", ... as phrases: "back" alone stays the incident's),
"dashboards will catch up as the backlog clears" ("catch up" and its forms, now also marked as what the
company's systems do) and "you may want to resend them" ("want", the advice's own marker). A store's own
terms otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("size", "sizes", "play", "plays", "playing", "played", "statement", "statements", "in fact",
         "back to expected", "back to usual", "back to its usual", "back to their usual", "back to typical",
         "back to regular", "back to healthy", "back to pre-incident")
ACTION = ("catch up", "catching up", "caught up")
ADVICE = ("want",)


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, PLAIN + ACTION + ADVICE, advice=ADVICE, action=ACTION, mark_held=True)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0039_vocabulary_sort_it_out"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
