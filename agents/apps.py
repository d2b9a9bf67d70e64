from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Gated pipelines"

    def ready(self):
        from agents.policy_rows import install_defaults_after_migrate
        from agents.policy_stamp import install_triggers_after_migrate

        post_migrate.connect(install_defaults_after_migrate, sender=self, dispatch_uid="agents.install_defaults")
        post_migrate.connect(install_triggers_after_migrate, sender=self, dispatch_uid="agents.policy_stamp")
