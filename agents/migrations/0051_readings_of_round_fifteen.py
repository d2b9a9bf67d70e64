"""What rounds of published-style updates showed the guard should read: "no patient data has been
affected" is a data reassurance whoever's data it is (the family's paraphrase no longer lists whose); a fix said to be "already
rolling out" is a fix under way (the family's paraphrases), and a service said to "now show correctly" or
to be "coming back" claims it works again ("working again"); and a few words of update language: whom
customers may ask ("the best person to ask", "best placed to help", "a member of staff"), "a reminder
that …", "you're (also) welcome to …", "please don't worry", "the last thing you need", when something "was
due", whether it "went through"; as advice also "open", "make", "take a look" and "come along" ("open
the app and review …", "you can make appointments now", "please take a look at your attention list",
"please come along as planned", "walk-ins are welcome", "please refer to …", "we recommend holding off on
large edits", "keep an eye on the web app"); thanks and greetings in the languages a regional company's
customers share ("terima kasih", "gracias") and informal spellings ("ur", "kinda"); and as what the company may say it does, "an adviser will be in
touch". A store's own terms and
patterns otherwise stay as its admins left them."""

from django.db import migrations

PLAIN = ("best person to ask", "best people to ask", "best placed to help", "best placed to answer",
         "a reminder that", "you're welcome to", "you’re welcome to", "member of staff", "members of staff",
         "the last thing you need", "due on", "due by", "was due", "were due", "is due", "are due",
         "go through", "goes through", "went through", "gone through", "welcome to", "don't worry", "do not worry",
         "no need to worry", "worry", "come along", "welcome", "at your disposal", "enquiries", "enquiry",
         "hola", "gracias", "perdón", "merci", "danke", "obrigado", "terima kasih", "assalamualaikum", "namaste",
         "ur", "kinda", "probs", "a bunch of", "gonna")
ADVICE = ("best person to ask", "best people to ask", "best placed to help", "best placed to answer",
          "a reminder that", "you're welcome to", "you’re welcome to", "member of staff", "members of staff",
          "the last thing you need", "open", "make", "take a look", "have a look", "welcome to", "don't worry",
          "come along", "welcome", "keep an eye on", "keeping an eye on", "rock up", "turn up", "refer to", "hold off",
          "holding off")
DOING = ("be in touch",)  # also what the company may say it does: "an adviser will be in touch"


def _line(family: str, marker: str) -> str:
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    lines = next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == family).paraphrases
    return next(line for line in lines if marker in line)


def _lines() -> list[tuple[str, str]]:
    return [
        ("fix under way", _line("fix under way", "already")),
        ("working again", _line("working again", "coming\\s+back")),
        ("working again", _line("working again", "now\\s+(?:shows?")),
    ]


# The data reassurance line it replaces, which named whose data it may be from a list ("customer",
# "user", …) and so missed "no patient data has been affected".
WHOSE_DATA_BEFORE = (
    r"\b(?:no|none\s+of\s+(?:your|the))\s+(?:customer\s+|user\s+|account\s+|personal\s+|payment\s+|"
    r"card\s+)?(?:data|information|details|records)\s+(?:was|were|has\s+been|have\s+been|is|are)\s+"
    r"(?:lost|accessed|exposed|leaked|compromised|affected|deleted|corrupted|at\s+risk|stolen|viewed)\b"
)


def forwards(apps, schema_editor):
    from agents.policy_rows import add_default_terms, add_paraphrases, remove_paraphrases

    add_default_terms(apps, schema_editor, tuple(dict.fromkeys(PLAIN + ADVICE + DOING)), advice=ADVICE, action=DOING,
                      mark_held=True)
    for family, line in _lines():
        add_paraphrases(apps, schema_editor, family, [line])
    remove_paraphrases(apps, schema_editor, "data reassurance", [WHOSE_DATA_BEFORE])
    add_paraphrases(apps, schema_editor, "data reassurance", [_line("data reassurance", "(?:[\\w-]+\\s+)?(?:data")])


def backwards(apps, schema_editor):
    from agents.policy_rows import add_paraphrases, remove_paraphrases

    for family, line in _lines():
        remove_paraphrases(apps, schema_editor, family, [line])
    remove_paraphrases(apps, schema_editor, "data reassurance", [_line("data reassurance", "(?:[\\w-]+\\s+)?(?:data")])
    add_paraphrases(apps, schema_editor, "data reassurance", [WHOSE_DATA_BEFORE])


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0050_readings_of_round_eight"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
