from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReviewerConfig(AppConfig):
    name = "reviewer"
    verbose_name = "Review"

    def ready(self):
        from reviewer.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
