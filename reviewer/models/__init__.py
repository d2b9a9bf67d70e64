"""The review app's models, one module a concern (as in ``agents/models/``):

- ``desk``: escalations, the append-only decisions on them, a lead's requests for changes;
- ``approvals``: approval rules and each person's approval under a quorum;
- ``api``: the JSON API's tokens and Idempotency-Keys;
- ``status``: the status page's components, the status each update gives them, its stored
  representations, its subscribers (email, webhook, Slack) and their confirmation emails;
- ``subscriber_urls``: which webhook and Slack URLs a subscriber may give (public hosts, https);
- ``outbox``: delivery channels, published updates and their outbox rows (deliveries), the runs that
  draft post-incident reports;
- ``alerts``: deadline rules, notification channels and notifications, holding statements, breaches;
- ``ledger``: the hash-chained ledger, its head and its verifications;
- ``accounts``: single sign-on's group mappings, identities and the roles it gave;
- ``translations``: an update's translations and what the invariance check found in them;
- ``learning``: what decisions teach the guard: their labels, the scorecard, the amendments mined from them.

They sit below every concern of ``reviewer/`` (docs/architecture.md): their references run across the
concerns (a published update names its escalation, a delivery its subscriber), while the concerns'
code depends one way only. Every public name is re-exported here, so ``from reviewer.models import
Escalation`` works as it always did; the app label, the model names and their tables are the app's
(``reviewer``), whichever module defines them.
"""

# isort: off
from reviewer.models.desk import EscalationQuerySet as EscalationQuerySet
from reviewer.models.desk import Escalation as Escalation
from reviewer.models.desk import Decision as Decision
from reviewer.models.desk import ChangeRequest as ChangeRequest
from reviewer.models.desk import Snooze as Snooze
from reviewer.models.desk import REVIEW_OUTCOMES as REVIEW_OUTCOMES
from reviewer.models.approvals import ApprovalRule as ApprovalRule
from reviewer.models.approvals import Approval as Approval
from reviewer.models.api import ApiToken as ApiToken
from reviewer.models.api import ApiIdempotencyKey as ApiIdempotencyKey
from reviewer.models.status import status_page_name as status_page_name
from reviewer.models.status import absolute_url as absolute_url
from reviewer.models.status import ComponentStatus as ComponentStatus
from reviewer.models.status import Impact as Impact
from reviewer.models.status import IMPACT_OF_STATUS as IMPACT_OF_STATUS
from reviewer.models.status import DEFAULT_TITLE as DEFAULT_TITLE
from reviewer.models.status import UNDER_MAINTENANCE as UNDER_MAINTENANCE
from reviewer.models.status import status_label as status_label
from reviewer.models.status import worst_status as worst_status
from reviewer.models.status import ComponentStatusChange as ComponentStatusChange
from reviewer.models.status import StatusComponent as StatusComponent
from reviewer.models.status import StatusComponentGroup as StatusComponentGroup
from reviewer.models.status import StatusAudience as StatusAudience
from reviewer.models.status import UpdateComponent as UpdateComponent
from reviewer.models.status import SubscriberQuerySet as SubscriberQuerySet
from reviewer.models.status import StatusSnapshotQuerySet as StatusSnapshotQuerySet
from reviewer.models.status import StatusSnapshot as StatusSnapshot
from reviewer.models.status import status_page_changed as status_page_changed
from reviewer.models.status import ConfirmationMail as ConfirmationMail
from reviewer.models.status import Subscriber as Subscriber
from reviewer.models.status import MaintenanceStatus as MaintenanceStatus
from reviewer.models.subscriber_urls import UnsafeURL as UnsafeURL
from reviewer.models.subscriber_urls import check_subscriber_url as check_subscriber_url
from reviewer.models.subscriber_urls import post_to_subscriber_url as post_to_subscriber_url
from reviewer.models.status import Maintenance as Maintenance
from reviewer.models.status import MaintenanceUpdate as MaintenanceUpdate
from reviewer.models.status import MaintenanceNotice as MaintenanceNotice
from reviewer.models.outbox import DeliveryChannel as DeliveryChannel
from reviewer.models.outbox import PublishedUpdateQuerySet as PublishedUpdateQuerySet
from reviewer.models.outbox import PublishedUpdate as PublishedUpdate
from reviewer.models.outbox import DeliveryQuerySet as DeliveryQuerySet
from reviewer.models.outbox import Delivery as Delivery
from reviewer.models.outbox import POSTMORTEM as POSTMORTEM
from reviewer.models.outbox import PostIncidentReport as PostIncidentReport
from reviewer.models.alerts import DeadlineRule as DeadlineRule
from reviewer.models.alerts import NotificationChannel as NotificationChannel
from reviewer.models.alerts import Notification as Notification
from reviewer.models.alerts import HoldingStatement as HoldingStatement
from reviewer.models.alerts import DeadlineBreach as DeadlineBreach
from reviewer.models.ledger import LedgerEntry as LedgerEntry
from reviewer.models.ledger import LedgerHead as LedgerHead
from reviewer.models.ledger import LedgerVerification as LedgerVerification
from reviewer.models.accounts import SsoGroupMapping as SsoGroupMapping
from reviewer.models.accounts import SsoIdentity as SsoIdentity
from reviewer.models.accounts import SsoRoleGrant as SsoRoleGrant
from reviewer.models.learning import Amendment as Amendment
from reviewer.models.learning import AmendmentApproval as AmendmentApproval
from reviewer.models.translations import UpdateTranslation as UpdateTranslation
# isort: on
