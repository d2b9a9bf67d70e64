from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save


class ReviewerConfig(AppConfig):
    name = "reviewer"
    verbose_name = "Review"

    def ready(self):
        from importlib import import_module

        from django.contrib.auth import get_user_model

        from agents.lab import register_decided_texts
        from agents.models import PolicyChange
        from agents.signals import run_finished
        from reviewer.accounts.sso import check_settings
        from reviewer.celery import TASK_PACKAGES
        from reviewer.desk.approvals import people_changed
        from reviewer.desk.decided import decided_texts
        from reviewer.desk.decisions import open_escalation
        from reviewer.ledger.events import policy_changed
        from reviewer.models import StatusAudience, StatusComponent, StatusComponentGroup, status_page_changed
        from reviewer.outbox.destinations import DestinationError, allowed_recipients, declared, resolve
        from reviewer.outbox.publishing import auto_publish, install_default_channel
        from reviewer.roles import ensure_roles
        from reviewer.status.history import component_added

        try:
            declared()
            allowed_recipients()
            if settings.LEDGER_ANCHOR_DESTINATION:
                resolve(settings.LEDGER_ANCHOR_DESTINATION)
        except DestinationError as error:
            raise ImproperlyConfigured(str(error)) from None
        check_settings()  # single sign-on's endpoints: addresses, https off this machine
        for package in TASK_PACKAGES:  # registered here, so enqueue_on_commit finds them in any process
            import_module(f"{package}.tasks")

        post_migrate.connect(ensure_roles, sender=self)
        post_migrate.connect(install_default_channel, sender=self, dispatch_uid="reviewer.default_channel")
        run_finished.connect(open_escalation, dispatch_uid="reviewer.open_escalation")
        run_finished.connect(auto_publish, dispatch_uid="reviewer.auto_publish")
        register_decided_texts(decided_texts)  # the policy lab judges decided texts again
        # The status page lists the components; a deploy migrates, and its templates may have changed.
        post_save.connect(status_page_changed, sender=StatusComponent, dispatch_uid="reviewer.component_saved")
        post_delete.connect(status_page_changed, sender=StatusComponent, dispatch_uid="reviewer.component_deleted")
        post_migrate.connect(status_page_changed, sender=self, dispatch_uid="reviewer.status_page_migrated")
        # A component's history starts when it is added; a group folds components on the page.
        post_save.connect(component_added, sender=StatusComponent, dispatch_uid="reviewer.component_added")
        post_save.connect(status_page_changed, sender=StatusComponentGroup, dispatch_uid="reviewer.group_saved")
        post_delete.connect(status_page_changed, sender=StatusComponentGroup, dispatch_uid="reviewer.group_deleted")
        # An audience's pages carry its name and its link (docs/status-page.md, 'Audiences and the internal page').
        post_save.connect(status_page_changed, sender=StatusAudience, dispatch_uid="reviewer.audience_saved")
        post_delete.connect(status_page_changed, sender=StatusAudience, dispatch_uid="reviewer.audience_deleted")
        # A member deactivated or taken out of a group: an approval rule may be out of reach now.
        post_save.connect(people_changed, sender=get_user_model(), dispatch_uid="reviewer.user_saved_rules")
        m2m_changed.connect(people_changed, sender=get_user_model().groups.through,
                            dispatch_uid="reviewer.groups_changed_rules")
        # The ledger records every policy change, in the transaction that records the change.
        post_save.connect(policy_changed, sender=PolicyChange, dispatch_uid="reviewer.ledger_policy_change")
