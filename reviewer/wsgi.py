import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")
application = get_wsgi_application()

from reviewer.startup import settle  # noqa: E402  (after the app: settle() freezes what it loaded)

settle()
