"""The agents app's admin, one module a family of its models (as in ``agents/models/``):

- ``policies``: pipeline policies, their stage prompts and the shared lists, every change recorded
  as a PolicyChange (shown read-only);
- ``specialists``: the routing specialists' data;
- ``incidents``: incidents and their facts, saved through ``agents.incidents.update_incident``;
- ``endpoints``: what a model endpoint can bear (how many calls at once, the completion ceiling);
- ``runs``: runs with their trace, model calls, review and audit, read-only;
- ``base``: what they share (an inline whose inputs are labelled for screen readers, read-only records).

Importing this package registers them all (Django's admin autodiscovery imports ``agents.admin``);
the admin URLs stay the app's: ``/admin/agents/<model>/``.
"""

from agents.admin.base import LabelledTabularInline as LabelledTabularInline
from agents.admin.base import ReadOnlyMixin as ReadOnlyMixin
from agents.admin.endpoints import EndpointLimitAdmin as EndpointLimitAdmin
from agents.admin.incidents import IncidentAdmin as IncidentAdmin
from agents.admin.incidents import IncidentFactInline as IncidentFactInline
from agents.admin.policies import HISTORY_ROWS as HISTORY_ROWS
from agents.admin.policies import IssueTypeAdmin as IssueTypeAdmin
from agents.admin.policies import PipelinePolicyAdmin as PipelinePolicyAdmin
from agents.admin.policies import PolicyChangeAdmin as PolicyChangeAdmin
from agents.admin.policies import RecordedAdmin as RecordedAdmin
from agents.admin.policies import RegionTokenAdmin as RegionTokenAdmin
from agents.admin.policies import RestrictedClaimAdmin as RestrictedClaimAdmin
from agents.admin.policies import RouteTargetAdmin as RouteTargetAdmin
from agents.admin.policies import StagePromptInline as StagePromptInline
from agents.admin.runs import RunAdmin as RunAdmin
from agents.admin.specialists import CustomerAdmin as CustomerAdmin
from agents.admin.specialists import PaymentInline as PaymentInline
from agents.admin.specialists import PlanAdmin as PlanAdmin
from agents.admin.specialists import ServiceIncidentAdmin as ServiceIncidentAdmin
