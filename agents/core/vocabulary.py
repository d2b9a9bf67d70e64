"""The reviewed vocabulary's first entries: ordinary incident-update language that states nothing
about an incident on its own (agents.core.guard.grounding). The policy rows are made from this list
once (a data migration); from then on the rows are the vocabulary, edited by policy admins and kept in
the policy history. The list is written from how careful status pages word their updates: the
lifecycle (investigating, identified, monitoring, resolved), impact in general words (errors, delays,
elevated latency, some users), what a team does (working on a fix, rolling back a change), apologies,
thanks and the cadence of updates.

What is deliberately not here, so that only the incident can license it: causes and parties
(vendor, provider, attack, bug, database...), money (refund, credit, fee, charge), data and security
(safe, breach, encrypted), customers' plans and segments (enterprise, free tier, legacy), products
and features, promises about the future (never, again, permanent, prevent), advice (clear, reinstall,
switch), law and contracts, what a product does by itself (automatic, automatically), who among the
affected is affected (mostly, mainly, primarily) and whether data is right (accurate). Plain Python: no
Django here.
"""

from __future__ import annotations

# Words and phrases any sentence may use. A phrase licenses its words only together: "back to normal"
# licenses "back" there, not in "we will get back to you with a refund".
UPDATE_LANGUAGE = """
incident issue issues problem problems outage outages disruption disruptions degradation degraded degrade
interruption interruptions incident's service services system systems platform component components
functionality performance availability reliability capacity stability operation operations
investigate investigating investigation investigations identify identified identifying cause causes causing
root underlying fix fixes fixing implement implemented implementing implementation deploy deployed deploying
deployment mitigate mitigated mitigating mitigation monitor monitored monitoring resolve resolved resolving
resolution restore restored restoring restoration recover recovered recovering recovery normal normally
operational operating operate stable improve improved improving improvement improvements progress progressing
continue continued continues continuing ongoing remain remains remained persist persisting subside subsided
complete completed completing completion resume resumed resuming return returned returning underway apply
applied applying change changes changed status update updates updated updating
partial partially major minor full fully intermittent intermittently elevated increased increase increases
higher high reduced reduce decreased lower slow slower slowness slowdown slowdowns latency delay delayed
delays timeout timeouts error errors failure failures fail fails failing failed unavailable availability
available unable inability impact impacts impacted affect affects affected affecting experience experiences
experiencing encounter encountering see seeing seen notice noticed observe observed observing report
reports reported reporting receive received receiving access accessing use using load loading connect
connecting connection connections connectivity request requests response responses respond responding
process processes processed processing queue queues queued backlog catch catching retry retries retried
retrying attempt attempts perform performing degraded
customer customers user users subset portion number some small large percentage share group
team teams engineer engineers engineering working work worked actively closely carefully priority top
urgently urgent aware know known knowledge look looking looked details detail information more further
additional provide providing provided share sharing post posting publish publishing next hour hours minute
minutes time times moment meantime meanwhile while later earlier today tonight
apologize apologies apology sorry inconvenience patience thank thanks appreciate understanding
frustrating frustration concern concerns regret
confirm confirmed confirming believe expect expected expecting estimate estimated estimates approximately
about around roughly likely possible possibly potential potentially appear appears appeared seem seems
begin began beginning start started starting since recent recently currently now presently
become becomes necessary need needs needed help helping assist assisting support supporting
result results effect effects situation matter matters difficulties difficulty
face facing trouble troubles successful successfully succeed succeeding function functioning behaviour
behavior ability able related regarding concerning affected
isolate isolated narrow narrowed extent determine determining assess assessing evaluate evaluating review
reviewing analysis analyse analyze analyzing ensure ensuring confirm
period window duration brief briefly temporary temporarily short extended prolonged significant
significantly noticeable slight slightly minimal limited overall multiple various certain specific
intermittent sporadic occasional occasionally generally
identified mitigated monitoring investigating resolved scheduled planned maintenance
update updates keep kept posted informed inform notify notified notification
closely continue steps step action actions measures progress
well quickly fast faster rate rates level levels volume volumes traffic load spike spikes
succeed success successful transaction transactions
arrive arrives arrived arriving arrival send sends sending sent deliver delivers delivered delivering delivery
deliveries create creates created creating save saves saved saving open opens opened opening run runs running
ran finish finished finishing take takes took taking taken wait waits waited waiting show shows showed
showing shown find found finding get gets got getting go goes went going come comes came coming make makes
made making move moved moving reach reached reaching stop stops stopped stopping watch watching watched
point worst best peak large larger small smaller long longer short shorter typical typically usual usually
unusual unusually right down slowly gradually steadily rise rises rising rose risen drop drops dropped
dropping fall falls fell falling learn learning regular regularly periodic periodically order orders guide
guidance instructions end side part way course reason source scope case cases instance instances set
people everyone anyone account accounts page pages job jobs task tasks instead expect
near confident confidence address addressed addressing baseline online
again worry worried prevent prevents prevented preventing late later lasted last lasting poor business
declined decline log release released releasing ship shipped largely percentile
add adjust adjusted allow allowed announce answer ask attempted bring build call choose collect compare
configure consider coordinate coordinating correct corrected correcting cover deal decide describe detect
detected develop direct disable disabled discover discovered display emerge enable enabled engage engaged
escalate escalated examine examining exceed exceeded expand explain extend fetch focus focused gather give
handle handled hold include included indicate indicates involve involved keep leave limit limited list locate
maintain manage managed mark marked match mean measure migrate miss missed modify notice obtain pass pause
paused pick place plan planned prepare prepared preparing present proceed produce push put raise raised read
redirect redirected reject rejected reload remove removed repair repaired replace replaced reply
require required reroute rerouted reset respond restart restarted revert reverted reverting
route routed routing schedule search select serve settle shift sign signing speed spread stay submit
switch switched sync test tested testing trace track tracking transfer trigger triggered troubleshoot
troubleshooting turn turned understand upgrade upgraded verify verified verifying view write writing
activity amount area behaviour condition connection content control count environment event events
feature features file files function information input item items level link list location message
messages method mode option options output process product products region regions resource
resources rule session sessions setting settings site source speed stage state step steps stream target
tool tools type types value values version versions volume interface
able active actual additional apparent basic clear common consistent
consistently continued current different difficult early easy effective entire existing extra frequent
frequently general good great heavy helpful immediate immediately important incorrect incorrectly individual
initial initially key last latest live local low main manual manually necessary new old open original
particular past pending possible previous previously primary prior proper properly quick rare rarely ready
real relevant reliable reliably remaining repeated responsive same secondary separate serious several severe
similar simple single smooth smoothly standard steady strong sudden suddenly timely total unexpected
unexpectedly upcoming useful valid various whole wide
day days week hour second seconds morning afternoon evening night overnight yesterday ago timeframe
utc gmt bst cet cest est edt pst pdt ist jst aest
alert alerts anomaly downtime event glitch hiccup lag malfunction unavailability
effort efforts hotfix patch remediation repair response rollout solution workaround workarounds
client clients member members organization organisation organizations staff specialists experts
sincerely deeply truly genuinely sincere
app apps web website site webpage screen screens blank spinner dashboard dashboards project projects member
members workspace workspaces visitor visitors viewer viewers data email emails message upload uploads uploaded
uploading download downloads downloaded generate generated generating generation store stored storing oldest
newest first drain drained draining shrink shrinking shrank grow growing quality refresh refreshing refreshed
confusion urgency below above ahead behind themselves itself summary hoped hope together happy glad
incomplete complete server servers thorough thoroughly conduct aim aiming aimed say said tell
premature early position fraction fractions lead leads leading led declare declared declaring unknown unclear
locked blocked blocking missing resend resent scale scaled scaling
recurrence reoccurrence happen happens happened newly application applications rely safeguard safeguards
contain contains chart charts graph graphs widget widgets
shoppers buyers participants attendees callers guests readers
outdated stale choppy garbled distorted frozen unresponsive sluggish wrong empty broken unreachable inaccessible
inconsistent erratic flaky hanging stuck glitches pinpoint pinpointed rebuild rebuilding rebuilt render rendering
rendered reindex reindexing reindexed reprocess reprocessing reprocessed propagate propagating propagated edit
edited editing edits audio sound video text image images photo photos picture pictures document documents thing
things
repository repositories repo repos commit commits branch branches pull pulls clone clones push pushes merge merges
ticket tickets comment comments thread threads channel channels conversation conversations chat chats inbox inboxes
folder folders calendar calendars invite invites invitation invitations meeting meetings room rooms board boards
list lists table tables field fields form forms survey surveys link links url urls post posts feed feeds timeline
story stories stream streams streaming playback player export exports import imports report reports query queries
search searches filter filters result results webhook webhooks build builds workflow workflows map maps cart carts
checkout catalog listing listings editor editors preview previews template templates theme themes extension
extensions plugin plugins profile profiles avatar avatars preference preferences analytics metric metrics button
buttons menu menus tab tabs sidebar notification notifications call calls
incoming outgoing inbound outbound hear heard hearing silence tone tones busy pipeline pipelines promptly navigate
navigating navigation verification
occur occurs occurred occurring healthy purchase purchases however really quite indeed eventually
almost constantly subsequently till manner kind based forward technical abnormal invalid final offline
anticipate anticipated flow flows flowing existing directly fill filled filling
learners students riders drivers fans organisers organizers employees patients recipients senders developers
admins administrators merchants sellers unaffected owners
residents tenants subscribers passengers travellers travelers visitors households homes
unfortunately thereafter evolve evolves evolved evolving enough range ranges utilize utilizes utilized utilizing
strategy strategies
note noted rather simply little precaution precautionary depending think treat treated treating reverse
reversed reversing
unsure mid http https
hard appropriate size sizes play plays playing played statement statements
otherwise upsetting stressful disappointing unchanged
hassle especially chance
hi hello hey
recognise recognize create creates created
dear arrive arrives arrived arriving
let nearby
anytime ones others else
grateful desk ok original things
cheers happily spot spots spotted spotting
hit
""".split()

UPDATE_PHRASES = (
    "back to normal", "roll back", "rolled back", "rolling back", "rollback", "roll it back", "rolled it back",
    "rolling it back", "rolled them back", "by mistake", "so far", "thus far", "make sure", "or sooner",
    "holds", "the fix holds", "soon", "roll out", "rolled out", "rolling out", "keep an eye on",
    "keeping an eye on", "final update", "back online", "back to baseline", "what happened", "catch up", "catching up",
    "caught up", "follow up", "as expected", "in the meantime", "at this time", "for now", "as soon as",
    "up and running", "try again", "again later", "working again", "bear with us", "stand by",
    "more information", "keep you posted", "keep you updated", "keep you informed", "status page",
    "next update", "post an update", "provide an update", "further updates", "all clear",
    "look into", "looking into", "looked into", "take a look", "on top of", "get to the bottom",
    "working again", "available again", "again later", "try it again", "once again", "normally again",
    "normal again", "running again", "loading again", "succeeding again", "arriving again", "processing again",
    "flowing again", "sending again", "online again", "up again", "save it again", "send it again",
    "up to date", "out of date", "back up", "back on track", "on track", "as usual", "log in", "log out",
    "logged in", "logged out", "locked out", "incident report", "post-incident review", "as quickly as possible",
    "with a delay", "in order", "out of order", "sign ups", "sign-ups", "cannot guarantee", "can't guarantee",
    "can not guarantee", "not able to guarantee", "unable to guarantee", "cannot promise", "can't promise",
    "in the future", "right away", "let you know", "let us know", "the trouble this caused", "take this seriously",
    "start it again", "start again", "all hands on deck", "figure out", "figuring out", "figured out",
    "anything else", "negative effect", "negative impact", "as normal", "someone else",
    "back to expected", "back to usual", "back to its usual", "back to their usual", "back to typical",
    "back to regular", "back to healthy", "back to pre-incident", "in fact",
    "to be safe", "in future",
    "feel free", "time of year", "mix-up", "mix-ups", "bearing with us", "let you down", "check back",
    "a little", "get back to you", "wrap up", "wrapped up", "wrapping up", "get this sorted", "get it sorted",
    "hi there", "help centre", "help center", "a hand", "straight away",
    "heads-up", "heads up", "keep going", "be assured",
    "go out", "goes out", "going out", "went out", "gone out", "give us a call",
    "heading out", "drop us a line", "stop by", "run it again", "run them again",
    "hang on to", "a call",
    "a lot", "dig into", "digging into", "dug into", "dig in", "working fine", "put this right", "put it right",
    "put things right", "take care of it", "take care of this",
    "can be reached", "by hand", "come back", "hang tight", "keep watching", "until it's sorted", "once it's sorted",
    "all sorted", "double-check", "double check", "carry on", "carried on", "carrying on", "carries on",
    "no need to ask", "in person", "pop into", "pop in", "pop by",
    "best person to ask", "best people to ask", "best placed to help", "best placed to answer",
    "a reminder that", "you're welcome to", "you’re welcome to", "member of staff", "members of staff",
    "the last thing you need", "due on", "due by", "was due", "were due", "is due", "are due",
    "go through", "goes through", "went through", "gone through", "welcome to", "don't worry", "do not worry",
    "no need to worry", "worry", "come along", "welcome", "at your disposal", "enquiries", "enquiry",
    # greetings and thanks in the languages a regional company's customers share, and informal spellings
    "hola", "gracias", "perdón", "merci", "danke", "obrigado", "terima kasih", "assalamualaikum", "namaste",
    "ur", "kinda", "probs", "a bunch of", "gonna",
    "the whole time", "as always", "safely ignore", "whichever suits you", "suits you", "no fun", "quick tip",
    "a bit", "loved ones",
    "a big thank you", "big thank you", "ask that you", "ask you to",
    "talk to", "talk through", "speak to", "speak with", "not sure", "aren't sure", "aren’t sure", "unsure",
    "still stands", "still stand", "not alone", "to be clear",
    "read more", "reassure you", "where the problem lies", "where the issue lies", "where the fault lies",
    "right now", "held up",
    "it's sorted", "it’s sorted", "is sorted", "are sorted", "been sorted", "sorted now", "sorted out",
    "exactly as", "exactly the same", "go by",
    "ring", "give us a ring", "a ring", "talk it through", "heading in", "head in", "got in touch", "in touch",
    "alike", "spot", "past incidents",
    "behind the scenes", "sometimes",
    "a batch of", "tip", "inbox", "spam folder", "junk folder", "on the day", "fault", "faults",
    "keep an eye out", "keeping an eye out",
    "regardless", "fine",
    "take a moment", "allow a little time", "allow some time",
    "depending on your bank", "depending on your card issuer", "depending on your card provider",
    "depending on your bank or card issuer", "be patient", "per cent",
)

# Advice a sentence may give without an approved action behind it: where to read and whom to ask.
ADVICE_LANGUAGE = (
    "please", "contact", "support", "team", "check", "status page", "visit", "subscribe", "follow",
    "updates", "update", "help", "reach out", "need", "needs", "question", "questions", "assistance",
    "information", "thank", "thanks", "patience", "apologize", "sorry", "inconvenience", "page",
    "more information", "our support team", "get in touch", "let us know", "next actions", "next steps", "next",
    "try", "again", "later", "time", "during", "incident", "issue", "disruption", "failed", "affected",
    "regularly", "any", "time", "continue", "experience", "experiencing", "issues", "problems", "see",
    "notice", "still", "errors", "accept our apologies", "your day", "make sure", "up to date",
    "reload the page", "refresh the page", "reload", "refresh", "use", "instead", "as usual", "working",
    "trouble", "caused", "bear with us", "bearing with us", "recommend", "suggest", "advise", "encourage",
    "hang up", "start it again", "start again", "reach us", "track", "progress", "keep", "as normal",
    "want", "feel free", "check back", "a little",
    "head to", "head over to", "a hand", "straight away", "right away", "reach", "get", "help centre", "help center",
    "services", "keep going", "give us a call",
    "let", "nearby", "drop us a line", "stop by", "run it again", "run them again",
    "hang on to", "a call", "give", "quick",
    "worth", "desk", "come back", "keep watching", "double-check", "double check", "in person", "pop into", "pop in",
    "pop by", "include", "open", "make", "take a look", "have a look", "welcome to", "don't worry", "come along",
    "welcome", "keep an eye on", "keeping an eye on", "rock up", "turn up", "refer to", "hold off", "holding off",
    "best person to ask", "best people to ask", "best placed to help", "best placed to answer",
    "a reminder that", "you're welcome to", "you’re welcome to", "member of staff", "members of staff",
    "the last thing you need",
    "carry on", "carrying on", "safely ignore", "a bit", "as always",
    "ask that you", "ask you to",
    "talk to", "talk through", "speak to", "speak with", "not sure", "aren't sure", "aren’t sure", "unsure",
    "wait", "read more", "grab", "go by",
    "ring", "give us a ring", "a ring", "talk it through", "heading in", "head in",
    "look over", "look at", "look through", "tip", "inbox", "spam folder", "junk folder", "on the day",
    "keep an eye out", "keeping an eye out",
    "take a moment", "allow a little time", "allow some time", "be patient",
)


# What the company may say it does without an approved action behind it: work on the incident itself
# (look into it, find the cause, fix it, watch the fix), speak to customers about it (post updates,
# apologize, thank) and what it sees. Actions on customers' things (re-running their builds, pausing
# their emails, turning a feature off for them, sending them a list) are left out: an approved action
# or a fact licenses those.
ACTION_LANGUAGE = """
incident incidents issue issues problem problems outage outages disruption disruptions degradation
service services system systems platform component components functionality performance availability
investigate investigating investigated investigation identify identified identifying cause causes root
underlying fix fixes fixing fixed implement implemented implementing implementation deploy deployed deploying
deployment mitigate mitigated mitigating mitigation monitor monitored monitoring resolve resolved resolving
resolution restore restored restoring restoration recover recovered recovering recovery
continue continued continues continuing progress progressing complete completed apply applied applying
change changes update updates updated updating status work working worked actively closely carefully
urgently priority top aware know known look looking looked details detail information more further
additional provide providing provided share sharing post posting posted publish publishing next
apologize apologies apology sorry inconvenience patience thank thanks appreciate understanding regret
confirm confirmed confirming believe expect expected expecting estimate estimated see seeing seen notice
noticed observe observed observing learn learning detect detected review reviewing assess assessing evaluate
evaluating analyze analyzing analyse determine determining isolate isolated narrow narrowed understand
ensure ensuring engage engaged escalate escalated focus focused prioritize prioritizing address addressing
take taking took taken steps step action actions measures effort efforts solution patch hotfix remediation
test testing tested verify verifying verified track tracking trace investigate team teams engineer engineers
engineering help helping support supporting keep kept posted informed inform notify notified
improve improved improving improvement improvements stable stability normal normally operational
error errors failure failures delay delays latency impact impacts impacted affected situation results result
root-cause fully partially partial full now currently still again soon quickly closely continue
customers users everyone watch watching watched conduct conducting conducted correct correcting corrected
find finding found pinpoint pinpointed make making made news follow following aim aiming plan planning hope
hoping want wish say said tell told remain remains remained
experience experiencing experienced encounter encountering encountered face facing receive receiving received
become became aware begin began beginning start starting started discover discovered locate located gather
gathering process processing processed like try trying anticipate proceed proceeding pursue pursuing prepare
preparing respond responded responding debug debugging troubleshoot troubleshooting rectify rectified
alleviate alleviated resume resumed resuming mark marking undergo undergoing hold
scale scaled scaling increase increased increasing restart restarted restarting reboot rebooted revert
reverted reverting reroute rerouted redirect redirected tune tuned replace replaced upgrade upgraded provision
provisioned rebuild rebuilding rebuilt reindex reindexing clear cleared clearing use used using thought
coordinate coordinating coordinated lead leads leading led roll rolling rolled bring bringing brought
add adding added need needs needed release released releasing
check checking checked reverse reversed reversing treat treated treating
alert alerted paged consider considered
recommend suggest advise encourage
report reported reporting
get getting finish finishing finished include including included
recognise recognize realise realize
compare comparing compared
fault faults
""".split()
ACTION_PHRASES = (
    "roll back", "rolled back", "rolling back", "rollback", "roll it back", "rolled it back", "rolling it back",
    "roll out", "rolled out", "rolling out", "keep an eye on", "keeping an eye on", "look into", "looking into",
    "looked into", "take a look", "get to the bottom", "keep you posted", "keep you updated", "keep you informed",
    "status page", "next update", "post an update", "provide an update", "further updates", "final update",
    "let you know", "more information", "as soon as", "as quickly as possible", "make sure", "on top of",
    "follow up", "back to normal", "in the meantime", "at this time", "for now", "so far", "as expected",
    "take this seriously", "bear with us", "incident report", "post-incident review", "the trouble this caused",
    "fail over", "failed over", "failing over", "be back with", "back with an update", "sort out", "sorted out",
    "keep a close eye on", "keeping a close eye on", "back down", "put a fix in place", "put in place",
    "take another look", "roll the change back", "rolling the change back", "rolled the change back",
    "roll that change back", "rolling that change back", "rolled that change back", "call off", "called off",
    "calling off", "sort this out", "sort it out", "sorting this out", "sorting it out",
    "catch up", "catching up", "caught up",
    "get back to you", "wrap up", "wrapped up", "wrapping up", "get this sorted", "get it sorted",
    "go out", "goes out", "going out", "went out", "gone out",
    "dig into", "digging into", "dug into", "dig in", "put this right", "put it right", "put things right",
    "take care of it", "take care of this", "would ask", "we'd ask", "we’d ask", "ask that you", "ask you to",
    "can be reached",
    "be in touch",
    "as we go", "we're satisfied", "we’re satisfied", "we are satisfied",
    "sort it", "sort this", "sorting it", "sorting this",
    "put a fix in", "put in a fix", "putting a fix in", "putting in a fix",
)


def default_terms() -> tuple[tuple[str, bool, bool], ...]:
    """(text, advice, action) for every first entry, each once."""
    advice = {t.lower() for t in ADVICE_LANGUAGE}
    action = {t.lower() for t in (*ACTION_LANGUAGE, *ACTION_PHRASES)}
    seen: dict[str, bool] = {}
    for text in (*UPDATE_LANGUAGE, *UPDATE_PHRASES, *ADVICE_LANGUAGE, *ACTION_LANGUAGE, *ACTION_PHRASES):
        key = text.lower()
        seen[key] = seen.get(key, False) or key in advice
    return tuple((text, flag, text in action) for text, flag in seen.items())
