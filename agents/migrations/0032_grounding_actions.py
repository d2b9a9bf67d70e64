"""Grounding reads what the company says it did, does or will do: the verb of such a statement ("we
have re-run your builds", "failed uploads will be sent automatically") needs an approved action, a key
message or a fact about what was done, or a term marked as something the company may say it does
without them (``action``: investigating, fixing, monitoring, rolling back, posting updates,
apologizing; docs/guard.md). This adds the flag and marks those terms. It adds the ordinary words
found in new sample updates written in the style of published status pages ("occurred", "healthy",
"however", "technical"), the people using a product ("learners", "riders", "employees"), and the
team's ordinary actions ("rebooted", "failed over", "sorted out"). A store's own terms keep the flags
its admins gave them; a term this list marks gets the action flag. Six words are switched off: what a
product does by itself ("automatic", "automatically"), who among the affected is affected ("mostly",
"mainly", "primarily") and whether data is right ("accurate") are claims the incident must make. A
vocabulary stored in a run from before has no action flags: its runs replay without this reading."""

from django.db import migrations, models

ADDED = (
    'abnormal', 'added', 'adding', 'administrators', 'admins', 'alleviate', 'alleviated', 'almost',
    'anticipate', 'anticipated', 'back down', 'back with an update', 'based', 'be back with', 'became',
    'bringing', 'brought', 'call off', 'called off', 'calling off', 'cleared', 'clearing', 'conducted',
    'conducting', 'constantly', 'coordinated', 'debug', 'debugging', 'developers', 'directly', 'drivers',
    'employees', 'encountered', 'eventually', 'experienced', 'fail over', 'failed over', 'failing over',
    'fans', 'fill', 'filled', 'filling', 'final', 'fixed', 'flow', 'flowing', 'flows', 'following', 'forward',
    'gathering', 'healthy', 'hoping', 'however', 'incidents', 'increasing', 'indeed', 'invalid',
    'investigated', 'keep a close eye on', 'keeping a close eye on', 'kind', 'learners', 'like', 'located',
    'manner', 'marking', 'merchants', 'news', 'occur', 'occurred', 'occurring', 'occurs', 'offline',
    'organisers', 'organizers', 'patients', 'planning', 'prioritize', 'prioritizing', 'proceeding',
    'provision', 'provisioned', 'purchase', 'purchases', 'pursue', 'pursuing', 'put a fix in place',
    'put in place', 'quite', 'reach us', 'really', 'reboot', 'rebooted', 'recipients', 'rectified', 'rectify',
    'responded', 'restarting', 'riders', 'roll', 'roll that change back', 'roll the change back', 'rolled',
    'rolled that change back', 'rolled the change back', 'rolling', 'rolling that change back',
    'rolling the change back', 'root-cause', 'sellers', 'senders', 'sort out', 'sorted out', 'students',
    'subsequently', 'take another look', 'technical', 'thought', 'till', 'told', 'trying', 'tune', 'tuned',
    'unaffected', 'undergo', 'undergoing', 'used', 'want', 'wish',
)

ACTION = (
    'action', 'actions', 'actively', 'add', 'added', 'adding', 'additional', 'address', 'addressing',
    'affected', 'again', 'aim', 'aiming', 'alleviate', 'alleviated', 'analyse', 'analyze', 'analyzing',
    'anticipate', 'apologies', 'apologize', 'apology', 'applied', 'apply', 'applying', 'appreciate',
    'as expected', 'as quickly as possible', 'as soon as', 'assess', 'assessing', 'at this time',
    'availability', 'aware', 'back down', 'back to normal', 'back with an update', 'be back with',
    'bear with us', 'became', 'become', 'began', 'begin', 'beginning', 'believe', 'bring', 'bringing',
    'brought', 'call off', 'called off', 'calling off', 'carefully', 'cause', 'causes', 'change', 'changes',
    'clear', 'cleared', 'clearing', 'closely', 'complete', 'completed', 'component', 'components', 'conduct',
    'conducted', 'conducting', 'confirm', 'confirmed', 'confirming', 'continue', 'continued', 'continues',
    'continuing', 'coordinate', 'coordinated', 'coordinating', 'correct', 'corrected', 'correcting',
    'currently', 'customers', 'debug', 'debugging', 'degradation', 'delay', 'delays', 'deploy', 'deployed',
    'deploying', 'deployment', 'detail', 'details', 'detect', 'detected', 'determine', 'determining',
    'discover', 'discovered', 'disruption', 'disruptions', 'effort', 'efforts', 'encounter', 'encountered',
    'encountering', 'engage', 'engaged', 'engineer', 'engineering', 'engineers', 'ensure', 'ensuring',
    'error', 'errors', 'escalate', 'escalated', 'estimate', 'estimated', 'evaluate', 'evaluating', 'everyone',
    'expect', 'expected', 'expecting', 'experience', 'experienced', 'experiencing', 'face', 'facing',
    'fail over', 'failed over', 'failing over', 'failure', 'failures', 'final update', 'find', 'finding',
    'fix', 'fixed', 'fixes', 'fixing', 'focus', 'focused', 'follow', 'follow up', 'following', 'for now',
    'found', 'full', 'fully', 'functionality', 'further', 'further updates', 'gather', 'gathering',
    'get to the bottom', 'help', 'helping', 'hold', 'hope', 'hoping', 'hotfix', 'identified', 'identify',
    'identifying', 'impact', 'impacted', 'impacts', 'implement', 'implementation', 'implemented',
    'implementing', 'improve', 'improved', 'improvement', 'improvements', 'improving', 'in the meantime',
    'incident', 'incident report', 'incidents', 'inconvenience', 'increase', 'increased', 'increasing',
    'inform', 'information', 'informed', 'investigate', 'investigated', 'investigating', 'investigation',
    'isolate', 'isolated', 'issue', 'issues', 'keep', 'keep a close eye on', 'keep an eye on',
    'keep you informed', 'keep you posted', 'keep you updated', 'keeping a close eye on', 'keeping an eye on',
    'kept', 'know', 'known', 'latency', 'lead', 'leading', 'leads', 'learn', 'learning', 'led',
    'let you know', 'like', 'locate', 'located', 'look', 'look into', 'looked', 'looked into', 'looking',
    'looking into', 'made', 'make', 'make sure', 'making', 'mark', 'marking', 'measures', 'mitigate',
    'mitigated', 'mitigating', 'mitigation', 'monitor', 'monitored', 'monitoring', 'more', 'more information',
    'narrow', 'narrowed', 'need', 'needed', 'needs', 'news', 'next', 'next update', 'normal', 'normally',
    'notice', 'noticed', 'notified', 'notify', 'now', 'observe', 'observed', 'observing', 'on top of',
    'operational', 'outage', 'outages', 'partial', 'partially', 'patch', 'patience', 'performance',
    'pinpoint', 'pinpointed', 'plan', 'planning', 'platform', 'post', 'post an update',
    'post-incident review', 'posted', 'posting', 'prepare', 'preparing', 'prioritize', 'prioritizing',
    'priority', 'problem', 'problems', 'proceed', 'proceeding', 'process', 'processed', 'processing',
    'progress', 'progressing', 'provide', 'provide an update', 'provided', 'providing', 'provision',
    'provisioned', 'publish', 'publishing', 'pursue', 'pursuing', 'put a fix in place', 'put in place',
    'quickly', 'reboot', 'rebooted', 'rebuild', 'rebuilding', 'rebuilt', 'receive', 'received', 'receiving',
    'recover', 'recovered', 'recovering', 'recovery', 'rectified', 'rectify', 'redirect', 'redirected',
    'regret', 'reindex', 'reindexing', 'release', 'released', 'releasing', 'remain', 'remained', 'remains',
    'remediation', 'replace', 'replaced', 'reroute', 'rerouted', 'resolution', 'resolve', 'resolved',
    'resolving', 'respond', 'responded', 'responding', 'restart', 'restarted', 'restarting', 'restoration',
    'restore', 'restored', 'restoring', 'result', 'results', 'resume', 'resumed', 'resuming', 'revert',
    'reverted', 'reverting', 'review', 'reviewing', 'roll', 'roll back', 'roll it back', 'roll out',
    'roll that change back', 'roll the change back', 'rollback', 'rolled', 'rolled back', 'rolled it back',
    'rolled out', 'rolled that change back', 'rolled the change back', 'rolling', 'rolling back',
    'rolling it back', 'rolling out', 'rolling that change back', 'rolling the change back', 'root',
    'root-cause', 'said', 'say', 'scale', 'scaled', 'scaling', 'see', 'seeing', 'seen', 'service', 'services',
    'share', 'sharing', 'situation', 'so far', 'solution', 'soon', 'sorry', 'sort out', 'sorted out',
    'stability', 'stable', 'start', 'started', 'starting', 'status', 'status page', 'step', 'steps', 'still',
    'support', 'supporting', 'system', 'systems', 'take', 'take a look', 'take another look',
    'take this seriously', 'taken', 'taking', 'team', 'teams', 'tell', 'test', 'tested', 'testing', 'thank',
    'thanks', 'the trouble this caused', 'thought', 'told', 'took', 'top', 'trace', 'track', 'tracking',
    'troubleshoot', 'troubleshooting', 'try', 'trying', 'tune', 'tuned', 'undergo', 'undergoing',
    'underlying', 'understand', 'understanding', 'update', 'updated', 'updates', 'updating', 'upgrade',
    'upgraded', 'urgently', 'use', 'used', 'users', 'using', 'verified', 'verify', 'verifying', 'want',
    'watch', 'watched', 'watching', 'wish', 'work', 'worked', 'working',
)

ADVICE = (
    'reach us',
)

SWITCHED_OFF = (
    'accurate', 'automatic', 'automatically', 'mainly', 'mostly', 'primarily',
)


def grow(apps, schema_editor):
    from agents.policy_rows import add_default_terms

    rows = add_default_terms(apps, schema_editor, ADDED, advice=ADVICE, action=ACTION)
    if rows is None:
        return
    rows.filter(text__in=ACTION).update(action=True)
    rows.filter(text__in=SWITCHED_OFF, advice=False).update(
        enabled=False, note="Says what a product does by itself, who is affected or whether data is right: the "
        "incident must say it.")


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0031_policy_change_dismissed"),
    ]

    operations = [
        migrations.AddField(
            model_name="groundingterm",
            name="action",
            field=models.BooleanField(
                default=False,
                help_text="On: it may also say what the company did, does or will do (“we are investigating”, “a fix "
                "will be deployed”). Off: such a statement built on it needs an approved action, a key message or a "
                "fact.",
            ),
        ),
        migrations.RunPython(grow, migrations.RunPython.noop),
    ]
