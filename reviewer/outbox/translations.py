"""Translations of an update, from the desk to the status page (docs/translations.md).

A person writes a translation on an escalation (:func:`save`), or the model drafts one
(:func:`draft`); either way the invariance check (``agents.core.guard.translation``) compares it
with the escalation's text, and a translation with findings is stopped: the desk shows it with its
findings until a person's edit passes. Approving the escalation records the sha256 of the text and
of each translation (:func:`set_hashes`, refused while one is stopped); publishing refuses a set whose
hashes changed since (:func:`check_set`) and attaches the translations to the published update.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.utils import timezone

from agents.core.guard.translation import check_title, check_translation
from agents.core.llm.base import LLM, LLMError, StageRequest
from agents.core.text import normalize
from reviewer.models import Decision, Escalation, PublishedUpdate, UpdateTranslation

SOURCE = "en"
# The languages' names as the desk (in English) says them.
NAMES = {"en": "English", "fr": "French", "de": "German"}


class TranslationRefused(Exception):
    """The translation, or the set, cannot be saved, approved or published; the message says why."""


def languages() -> list[str]:
    """The languages an update may be translated into (the status page's, the source aside)."""
    return [code for code in settings.STATUS_LANGUAGES if code != SOURCE]


def desk_rows(escalation: Escalation) -> list[dict]:
    """One row per language of the status page: its translation (or None), for the escalation page."""
    saved = {t.language: t for t in escalation.translations.select_related("written_by")}
    return [{"code": code, "name": NAMES[code], "translation": saved.get(code)} for code in languages()]


def sha256(text: str, title: str = "") -> str:
    return hashlib.sha256(f"{normalize(title)}\n{normalize(text)}".encode()).hexdigest()


def source_text(escalation: Escalation) -> str:
    """The text a translation translates: the text under review."""
    return escalation.candidate


def findings(source: str, text: str, language: str, *, title: str = "") -> list[dict]:
    """The check's findings on a translation; its title may only say what the source text says."""
    found = [f.as_dict() for f in check_translation(source, text, language)]
    if title:
        found += [{**f.as_dict(), "message": f"Title: {f.message}"} for f in check_title(source, title, language)]
    return found


def save(escalation: Escalation, language: str, text: str, *, title: str = "", user=None,
         model: str = "") -> UpdateTranslation:
    """Store (or replace) the escalation's translation into ``language``, checked against its text.
    ``user`` wrote it, or ``model`` drafted it. A stopped translation is stored with its findings."""
    if language not in languages():
        raise TranslationRefused(f"“{language[:8]}” is not one of the status page's languages.")
    if escalation.status != Escalation.Status.PENDING:
        # The approval covers the set as it was: a translation added or changed after it would be
        # published without anyone approving it (check_set refuses such a set).
        raise TranslationRefused("The text is decided; translations are written before it is approved.")
    text, title = text.strip(), normalize(title)
    if not text:
        raise TranslationRefused("The translation is empty.")
    source = source_text(escalation)
    translation, _ = UpdateTranslation.objects.update_or_create(
        escalation=escalation, language=language,
        defaults={"text": text, "title": title, "sha256": sha256(text, title), "source_sha256": sha256(source),
                  "written_by": user, "drafted_by_model": model,
                  "findings": findings(source, text, language, title=title),
                  "checked_at": timezone.now()})
    return translation


def set_hashes(escalation: Escalation, text: str) -> dict[str, str]:
    """What an approval of ``text`` records: its sha256 and each translation's, by language. Refuses
    a set with a stopped translation, or one checked against another text than the one approved."""
    hashes = {SOURCE: sha256(text)}
    for translation in escalation.translations.all():
        if translation.stopped:
            raise TranslationRefused(f"The {NAMES[translation.language]} translation is stopped "
                                     f"({translation.findings[0]['message']}): edit it or delete it first.")
        if translation.source_sha256 != hashes[SOURCE]:
            raise TranslationRefused(f"The {NAMES[translation.language]} translation was checked against another "
                                     "version of the text: save it again to check it against this one.")
        hashes[translation.language] = translation.sha256
    return hashes


def check_set(escalation: Escalation | None, text: str) -> list[UpdateTranslation]:
    """The translations to publish with ``text``: exactly the set the approval recorded. Raises
    :class:`TranslationRefused` when a translation was added, edited or removed since."""
    if escalation is None:
        return []
    decision = (Decision.objects.filter(escalation=escalation, action__in=[Decision.Action.APPROVE,
                                                                            Decision.Action.EDIT_APPROVE])
                .order_by("-at", "-id").first())
    approved = dict(decision.translation_hashes) if decision is not None else {}
    translations = list(escalation.translations.all())
    now = {SOURCE: sha256(text), **{t.language: t.sha256 for t in translations}}
    if approved.get(SOURCE, now[SOURCE]) != now[SOURCE] or set(approved) - {SOURCE} != set(now) - {SOURCE} or any(
            approved[code] != now[code] for code in now if code != SOURCE):
        changed = sorted(code for code in set(now) | set(approved) if approved.get(code) != now.get(code))
        raise TranslationRefused(f"The set approved changed since ({', '.join(changed)}): approve the set "
                                 "again before publishing it.")
    return translations


def attach(update: PublishedUpdate, translations: list[UpdateTranslation]) -> None:
    UpdateTranslation.objects.filter(pk__in=[t.pk for t in translations]).update(update=update)


# What the model is asked: the same rules the check holds its answer to.
DRAFT_SYSTEM = (
    "You translate a customer-facing incident update from English into {language}. Keep every number with "
    "its unit and any word like 'about' or 'more than', every time, date, id, link, email address, phone "
    "number and region exactly as the text says them, written the {language} way. Add nothing: no promise, "
    "no reassurance, no claim the text does not make, and keep its hedges. Answer with the translation only."
)
DRAFT_LIMIT = 2000  # completion tokens: an update is at most a few hundred words


def draft(escalation: Escalation, language: str, llm: LLM) -> UpdateTranslation:
    """The model drafts the translation as its own gated step: its answer goes through :func:`save`
    like a person's, so a draft that changes a fact or adds a claim is stored stopped, with its
    findings, for a person to edit. A model that answers nothing usable refuses, saying so."""
    if language not in languages():
        raise TranslationRefused(f"“{language[:8]}” is not one of the status page's languages.")
    source = source_text(escalation)
    request = StageRequest(stage="translate", system=DRAFT_SYSTEM.format(language=NAMES[language]), user=source,
                           tool=None, inputs={"text": source, "language": language},
                           max_completion_tokens=DRAFT_LIMIT)
    try:
        reply = llm.complete(request)
    except (LLMError, ValueError) as error:  # ValueError: a model with no rule for this stage (offline)
        raise TranslationRefused(f"The model did not draft a translation ({str(error)[:200]}); write it "
                                 "yourself.") from None
    return save(escalation, language, reply.text, model=getattr(llm, "label", "") or "the model")
