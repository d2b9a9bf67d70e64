import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")
# This process serves pages: it waits WEB_DATABASE_POOL_TIMEOUT for a pooled connection, not the
# workers' DATABASE_POOL_TIMEOUT (settings, DATABASES).
os.environ["SERVING_WEB"] = "true"
application = get_wsgi_application()

from agents import tracing  # noqa: E402
from reviewer.startup import settle  # noqa: E402  (after the app: settle() freezes what it loaded)

# A server other than gunicorn (gunicorn's post_fork did it already; this process is its worker).
tracing.configure()
settle()
