from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReviewerConfig(AppConfig):
    name = "reviewer"
    verbose_name = "Review"

    def ready(self):
        from agents.signals import run_finished
        from reviewer.decisions import open_escalation
        from reviewer.publishing import auto_publish, install_default_channel
        from reviewer.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
        post_migrate.connect(install_default_channel, sender=self, dispatch_uid="reviewer.default_channel")
        run_finished.connect(open_escalation, dispatch_uid="reviewer.open_escalation")
        run_finished.connect(auto_publish, dispatch_uid="reviewer.auto_publish")
