"""The customer-text guard (docs/guard.md): the patch guard on a revision and the final answer's checks
(``patch``), and the fact and claim checks they run (``checks``), one module per check.

The guard's entry points are re-exported here, so ``from agents.core.guard import check_final_answer``
reads as it always did. Plain Python: no Django here.
"""

from agents.core.guard.patch import ANSWER_REASONS as ANSWER_REASONS
from agents.core.guard.patch import AUTO_PUBLISH_CONTACT as AUTO_PUBLISH_CONTACT
from agents.core.guard.patch import PATCH_REASONS as PATCH_REASONS
from agents.core.guard.patch import GuardConfig as GuardConfig
from agents.core.guard.patch import GuardResult as GuardResult
from agents.core.guard.patch import allowed_text as allowed_text
from agents.core.guard.patch import check_final_answer as check_final_answer
from agents.core.guard.patch import check_revision as check_revision
from agents.core.guard.patch import claim_evidence as claim_evidence
from agents.core.guard.patch import evidence_json as evidence_json
from agents.core.guard.patch import guard_config as guard_config
from agents.core.guard.patch import length_cap as length_cap
from agents.core.guard.patch import length_increase_pct as length_increase_pct
from agents.core.guard.patch import similarity as similarity
from agents.core.guard.patch import strict_claims_for as strict_claims_for
