import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")

app = Celery("reviewer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def make_broker_folder(sender, **kwargs):
    """The filesystem transport needs its folder to exist before the first message."""
    from django.conf import settings

    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        os.makedirs(settings.CELERY_BROKER_FOLDER, exist_ok=True)
