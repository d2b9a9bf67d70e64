"""What a web process does once, after loading the app and before it serves (``reviewer/wsgi.py``).

Python's cycle collector runs a full collection whenever enough objects have survived the younger
generations, and a full collection visits every tracked object in the process: after startup that
is ~150,000 objects (Django, django-ninja's schemas, the URLconf, the models), which took 100-200 ms
of CPU on the 2-core benchmark machine, once every dozen requests or so of an API list. That was
the API lists' p95 (README, Performance). Objects alive at startup live as long as the process, so
they are moved out of the collector's view once (``gc.freeze``): a full collection then visits
only what requests created since, and nothing the app needs is ever collected by mistake (freezing
only stops the collector from scanning them; memory no longer referenced is still freed).
"""

from __future__ import annotations

import gc


def settle() -> int:
    """Load what every request needs that Django loads lazily (the URLconf: every view module, the
    API and its schemas), collect what startup left as garbage, then freeze what is alive.
    Returns how many objects were frozen (in all, counting earlier calls)."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (imports reviewer.urls and everything it names)
    gc.collect()  # garbage frozen now would never be collected
    gc.freeze()
    return gc.get_freeze_count()
