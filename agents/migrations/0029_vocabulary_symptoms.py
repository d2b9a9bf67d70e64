"""The grounding vocabulary grown by the words real updates use to describe what customers see and who
they are, found by reading sample updates written in the style of published status pages: symptoms
("choppy", "stale", "unresponsive"), what a team does ("pinpointed", "rebuilding", "reindexing"), what is
on a screen and in a product ("audio", "images", "documents", "repositories", "inbox", "calendar"), the
people using it ("participants", "shoppers"), and the advice to start something again. None of them
says what happened or what will happen on its own: the sentence's other words still need the incident.
A store's own terms stay as its admins left them."""

from django.db import migrations

ADDED = (
    'analytics', 'attendees', 'audio', 'avatar', 'avatars', 'board', 'boards', 'branch', 'branches',
    'broken', 'build', 'builds', 'busy', 'button', 'buttons', 'buyers', 'calendar', 'calendars', 'call',
    'callers', 'calls', 'cart', 'carts', 'catalog', 'channel', 'channels', 'chat', 'chats', 'checkout',
    'choppy', 'clone', 'clones', 'comment', 'comments', 'commit', 'commits', 'conversation',
    'conversations', 'distorted', 'document', 'documents', 'edit', 'edited', 'editing', 'editor', 'editors',
    'edits', 'empty', 'erratic', 'export', 'exports', 'extension', 'extensions', 'feed', 'feeds', 'field',
    'fields', 'filter', 'filters', 'flaky', 'folder', 'folders', 'form', 'forms', 'frozen', 'garbled',
    'glitches', 'guests', 'hanging', 'hear', 'heard', 'hearing', 'image', 'images', 'import', 'imports',
    'inaccessible', 'inbound', 'inbox', 'inboxes', 'incoming', 'inconsistent', 'invitation', 'invitations',
    'invite', 'invites', 'link', 'links', 'list', 'listing', 'listings', 'lists', 'map', 'maps', 'meeting',
    'meetings', 'menu', 'menus', 'merge', 'merges', 'metric', 'metrics', 'navigate', 'navigating',
    'navigation', 'notification', 'notifications', 'outbound', 'outdated', 'outgoing', 'participants',
    'photo', 'photos', 'picture', 'pictures', 'pinpoint', 'pinpointed', 'pipeline', 'pipelines', 'playback',
    'player', 'plugin', 'plugins', 'post', 'posts', 'preference', 'preferences', 'preview', 'previews',
    'profile', 'profiles', 'promptly', 'propagate', 'propagated', 'propagating', 'pull', 'pulls', 'push',
    'pushes', 'queries', 'query', 'readers', 'rebuild', 'rebuilding', 'rebuilt', 'reindex', 'reindexed',
    'reindexing', 'render', 'rendered', 'rendering', 'repo', 'report', 'reports', 'repos', 'repositories',
    'repository', 'reprocess', 'reprocessed', 'reprocessing', 'result', 'results', 'room', 'rooms',
    'search', 'searches', 'shoppers', 'sidebar', 'silence', 'sluggish', 'sound', 'stale', 'start again',
    'start it again', 'stories', 'story', 'stream', 'streaming', 'streams', 'stuck', 'survey', 'surveys',
    'tab', 'table', 'tables', 'tabs', 'template', 'templates', 'text', 'theme', 'themes', 'thing', 'things',
    'thread', 'threads', 'ticket', 'tickets', 'timeline', 'tone', 'tones', 'unreachable', 'unresponsive',
    'url', 'urls', 'verification', 'video', 'webhook', 'webhooks', 'workflow', 'workflows', 'wrong',
)

ADVICE = ('start again', 'start it again')


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    add_default_terms(apps, schema_editor, ADDED, advice=ADVICE)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0028_incident_components"),
    ]

    operations = [migrations.RunPython(grow, migrations.RunPython.noop)]
