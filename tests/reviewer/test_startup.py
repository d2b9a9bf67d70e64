"""A web process settles after loading the app (reviewer.startup, called by reviewer/wsgi.py): the
URLconf with the API is loaded and every object alive then is out of the cycle collector's view, so
a full collection no longer visits the ~150,000 objects of startup (docs/performance-log.md)."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

PROBE = """
import gc, sys
import reviewer.wsgi
from reviewer import api
tracked = {id(o) for o in gc.get_objects()}
print(gc.get_freeze_count(), 'reviewer.urls' in sys.modules, id(api.api) in tracked, len(tracked))
"""


def test_loading_the_wsgi_app_loads_the_urlconf_and_freezes_what_startup_left_alive():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "reviewer.settings", "SECRET_KEY": secrets.token_urlsafe(50),
           "DEBUG": "false", "ALLOWED_HOSTS": "testserver"}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=env, check=True).stdout.split()

    frozen, urls_loaded, api_still_scanned, still_tracked = int(out[0]), out[1], out[2], int(out[3])
    assert urls_loaded == "True"
    assert frozen > 50_000  # the app, its URLconf and the API's schemas
    assert api_still_scanned == "False"  # the API object was alive at startup: frozen with the rest
    assert still_tracked < frozen / 10  # what a full collection still visits
