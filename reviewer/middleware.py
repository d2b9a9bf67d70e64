"""Query strings that no page can use are refused before any view reads them.

A NUL cannot enter a PostgreSQL string: a filter carrying one (``/inbox/?stop_reason=a%00b``, an
admin list filter) reached the database and answered 500. Other C0/C1 control characters are no
better in a filter. Every GET parameter of every page, the admin's included, is checked here once;
forms still check what they take (lengths, choices) and say so on the page.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render

from agents.core.inputs import control_character


class RefuseControlCharactersMiddleware:
    """400 with a page saying which parameter carries which control character (a 422 in JSON for
    the API, like its other validation errors)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            for text in (name, *values):
                found = control_character(text)
                if found:
                    message = (f"The address has a control character (U+{ord(found):04X}) in the query "
                               f"parameter “{name}”. Remove it and try again.")
                    if request.path.startswith("/api/"):  # the API's validation answer, in JSON
                        return JsonResponse({"message": message, "detail": [{"loc": ["query", name],
                                                                              "msg": "control character"}]},
                                            status=422)
                    return render(request, "400.html", {"message": message}, status=400)
        return self.get_response(request)
