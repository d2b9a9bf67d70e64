"""What a round of published updates showed the guard should read: a service said to be doing its
work again ("the map is updating again", "orders are coming through again") claims recovery like
"working again" does (the family's paraphrases); the incident's own "no late fee will be charged"
supports a text that says so ("credits and refunds", supported by); and a few words of update language:
"anytime", "ones", "others", "else", "a lot", "working fine", "grateful", "by hand", "hang tight", "until
it's sorted", "all sorted", "Raw downloads OK", "your original payment", "won't speed things up",
"deliveries carried on as normal", "no need to ask"; as advice "it's worth checking", "call our support
desk", "come back and add photos later", "keep watching as usual", "double-check", "top up in person",
"pop into the info tent", "include the release UPC"; "digging into", "we'll dig in", "while we put this right", "the team
will take care of it", "can be reached at" (also what the company may say it does); and as what the
company may say it does "get", "finish", "include", "recognise", "would ask" ("while we get the map
updating again", "while we finish crediting everyone's coins", "so we can include it in our
investigation", "we recognise how important …", "we would ask all participants to check …", "we'd ask
you to review …"). A store's
own terms and patterns otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("anytime", "ones", "others", "else", "a lot", "working fine", "grateful", "by hand", "hang tight",
         "until it's sorted", "once it's sorted", "ok", "all sorted", "original", "things", "carry on", "carried on",
         "carrying on", "carries on", "no need to ask")
ADVICE = ("worth", "desk", "come back", "keep watching", "double-check", "double check", "in person", "pop into",
          "pop in", "pop by")
DOING = ("dig into", "digging into", "dug into", "dig in", "put this right", "put it right", "put things right",
         "take care of it", "take care of this", "can be reached")
# "include" is advice too: "contact us and include the release UPC"
ACTION = ("get", "getting", "finish", "finishing", "finished", "include", "including", "included", "recognise",
          "recognize", "realise", "realize", "would ask", "we'd ask", "we’d ask")


def _line(family: str, field: str, marker: str) -> str:
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    lines = getattr(next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == family), field)
    return next(line for line in lines if marker in line)


def _lines() -> list[tuple[str, str, str]]:
    return [
        ("working again", "paraphrases", _line("working again", "paraphrases", "coming\\s+through")),
        ("credits and refunds", "supported_by", _line("credits and refunds", "supported_by", "penalt")),
    ]


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms, add_paraphrases

    add_default_terms(apps, schema_editor, PLAIN + ADVICE + DOING + ACTION, advice=ADVICE + ("include",),
                      action=DOING + ACTION, mark_held=True)
    for family, field, line in _lines():
        add_paraphrases(apps, schema_editor, family, [line], field=field)


def backwards(apps, schema_editor):
    from agents.policy_rows import remove_paraphrases

    for family, field, line in _lines():
        remove_paraphrases(apps, schema_editor, family, [line], field=field)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0049_vocabulary_give_us_a_call"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
