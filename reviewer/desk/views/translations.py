"""A lead writes or edits a translation of the text under review (docs/translations.md)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from agents.tasks import llm_for
from reviewer.desk import decisions
from reviewer.models import Escalation
from reviewer.outbox import translations
from reviewer.permissions import require_perm


@require_perm(decisions.DECIDE_PERMISSION)
@require_POST
def save_translation(request, pk, language):
    escalation = get_object_or_404(Escalation, pk=pk)
    try:
        if request.POST.get("by") == "model":
            # The model's draft is checked like a person's; a stopped one waits here for an edit.
            llm = llm_for(decisions.policy_now(escalation.run)[0])
            translation = translations.draft(escalation, language, llm)
        else:
            translation = translations.save(escalation, language, request.POST.get("text", ""),
                                            title=request.POST.get("title", ""), user=request.user)
    except (translations.TranslationRefused, ValueError) as refused:  # ValueError: the model's settings
        messages.error(request, str(refused))
    else:
        if translation.stopped:
            messages.warning(request, f"The {translations.NAMES[language]} translation is stopped: "
                                      f"{translation.findings[0]['message']}")
        else:
            messages.success(request, f"The {translations.NAMES[language]} translation passes the check.")
    return redirect(reverse("escalation", args=[pk]) + f"#translation-{language}")
