"""The grounding vocabulary grown since its first terms (0024): ordinary update language found by
reading sample updates written for the purpose (dates, apologies, catching up, "in the meantime", the
verbs of recovery), the advice words "recommend", "refresh the page" and the like, and three words taken
out because they carry a claim about customers' data ("record", "records", "retrieve": switched off, not
deleted, so the policy history keeps them). A store's own terms stay as its admins left them: a term
it already has keeps its flags, except that a term the list now allows in advice gets that flag."""

from django.db import migrations

ADDED = (
    'above', 'accept our apologies', 'address', 'addressed', 'addressing', 'advise', 'ahead', 'aim', 'aimed',
    'aiming', 'any', 'app', 'application', 'applications', 'apps', 'as quickly as possible', 'as usual',
    'back on track', 'back online', 'back to baseline', 'back up', 'baseline', 'bearing with us', 'behind',
    'below', 'blank', 'blocked', 'blocking', 'can not guarantee', "can't guarantee", "can't promise",
    'cannot guarantee', 'cannot promise', 'caused', 'chart', 'charts', 'conduct', 'confidence', 'confident',
    'confusion', 'contain', 'contains', 'dashboard', 'dashboards', 'data', 'declare', 'declared',
    'declaring', 'download', 'downloaded', 'downloads', 'drain', 'drained', 'draining', 'email', 'emails',
    'encourage', 'final update', 'first', 'fraction', 'fractions', 'generate', 'generated', 'generating',
    'generation', 'glad', 'graph', 'graphs', 'grow', 'growing', 'hang up', 'happen', 'happened', 'happens',
    'happy', 'holds', 'hope', 'hoped', 'in order', 'in the future', 'incident report', 'incomplete',
    'itself', 'keep an eye on', 'keeping an eye on', 'lead', 'leading', 'leads', 'led', 'let you know',
    'locked', 'locked out', 'log in', 'log out', 'logged in', 'logged out', 'make sure', 'missing', 'newest',
    'newly', 'not able to guarantee', 'oldest', 'on track', 'online', 'or sooner', 'out of date',
    'out of order', 'position', 'post-incident review', 'premature', 'project', 'projects', 'quality',
    'recommend', 'recurrence', 'refresh', 'refresh the page', 'refreshed', 'refreshing', 'reload the page',
    'rely', 'reoccurrence', 'resend', 'resent', 'right away', 'roll out', 'rolled out', 'rolling out',
    'safeguard', 'safeguards', 'said', 'say', 'scale', 'scaled', 'scaling', 'screen', 'screens', 'server',
    'servers', 'shrank', 'shrink', 'shrinking', 'sign ups', 'sign-ups', 'so far', 'soon', 'spinner', 'still',
    'store', 'stored', 'storing', 'suggest', 'summary', 'take this seriously', 'tell', 'the fix holds',
    'the trouble this caused', 'themselves', 'thorough', 'thoroughly', 'thus far', 'together',
    'unable to guarantee', 'unclear', 'unknown', 'up to date', 'upload', 'uploaded', 'uploading', 'uploads',
    'urgency', 'viewer', 'viewers', 'visitor', 'visitors', 'web', 'webpage', 'website', 'what happened',
    'widget', 'widgets', 'with a delay', 'workspace', 'workspaces', 'your day',
)

ADVICE = (
    'accept our apologies', 'advise', 'any', 'as usual', 'bear with us', 'bearing with us', 'caused',
    'continue', 'encourage', 'errors', 'experience', 'experiencing', 'hang up', 'instead', 'issues',
    'make sure', 'notice', 'problems', 'recommend', 'refresh', 'refresh the page', 'regularly', 'reload',
    'reload the page', 'see', 'still', 'suggest', 'trouble', 'up to date', 'use', 'working', 'your day',
)

SWITCHED_OFF = (
    'record', 'records', 'retrieve',
)


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    rows = add_default_terms(apps, schema_editor, ADDED, advice=ADVICE)
    if rows is None:
        return
    rows.filter(text__in=ADVICE).update(advice=True)
    rows.filter(text__in=SWITCHED_OFF, advice=False).update(
        enabled=False, note="Carries a claim about customers' data: the incident must say it.")


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0026_cause_families"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
