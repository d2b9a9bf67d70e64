"""The agents app's models, one module a family:

- ``policies``: the pipeline policies and their stage prompts, the shared lists they read (issue types,
  route targets, restricted claims, region tokens) and the record of every change to them;
- ``specialists``: the routing specialists' data (plans, customers, payments, service statuses);
- ``incidents``: incidents, their facts and the versions of those facts;
- ``runs``: runs and what they record (trace steps, model calls, reviews, audits);
- ``endpoints``: what a model endpoint can bear (an admin's limits) and the slots its calls hold.

Every public name is re-exported here, so ``from agents.models import Run`` works as it always did;
the app label, the model names and their tables are the app's (``agents``), whichever module
defines them. The modules are imported in the order the models were first declared in, so Django
registers them in the same order as before the split.
"""

# isort: off
from agents.models.policies import BUDGET_FIELDS as BUDGET_FIELDS
from agents.models.policies import JUDGE_FIELDS as JUDGE_FIELDS
from agents.models.policies import BUDGET_RANGES as BUDGET_RANGES
from agents.models.policies import PIPELINE_STAGES as PIPELINE_STAGES
from agents.models.policies import STAGE_CHOICES as STAGE_CHOICES
from agents.models.policies import GroundingTerm as GroundingTerm
from agents.models.policies import IssueType as IssueType
from agents.models.policies import PipelinePolicy as PipelinePolicy
from agents.models.policies import PolicyChange as PolicyChange
from agents.models.policies import PolicyStamp as PolicyStamp
from agents.models.policies import RegionToken as RegionToken
from agents.models.policies import RestrictedClaim as RestrictedClaim
from agents.models.policies import RouteTarget as RouteTarget
from agents.models.policies import StagePrompt as StagePrompt
from agents.models.policies import all_decisions as all_decisions
from agents.models.policies import is_text_pipeline as is_text_pipeline
from agents.models.policies import policy_fields as policy_fields
from agents.models.policies import snapshot as snapshot
from agents.models.policies import split_lines as split_lines
from agents.models.policies import split_words as split_words
from agents.models.policies import stage_tool as stage_tool
from agents.models.policies import worker_names as worker_names
from agents.models.specialists import Customer as Customer
from agents.models.specialists import Payment as Payment
from agents.models.specialists import Plan as Plan
from agents.models.specialists import ServiceIncident as ServiceIncident
from agents.models.incidents import Incident as Incident
from agents.models.incidents import IncidentFact as IncidentFact
from agents.models.incidents import IncidentQuerySet as IncidentQuerySet
from agents.models.incidents import IncidentVersion as IncidentVersion
from agents.models.incidents import changes_text as changes_text
from agents.models.incidents import fact_changes as fact_changes
from agents.models.runs import IN_FLIGHT_FILTER as IN_FLIGHT_FILTER
from agents.models.runs import AuditDiff as AuditDiff
from agents.models.runs import ModelCall as ModelCall
from agents.models.runs import Review as Review
from agents.models.runs import Run as Run
from agents.models.runs import RunQuerySet as RunQuerySet
from agents.models.runs import TraceStep as TraceStep
from agents.models.runs import since as since
from agents.models.endpoints import EndpointLimit as EndpointLimit
from agents.models.endpoints import EndpointSlot as EndpointSlot
# isort: on
