"""schemathesis against the live OpenAPI document: every operation, with a valid token, answers no
5xx, only documented status codes, JSON, and bodies that match their schemas. Both passes (SQLite,
PostgreSQL) run it."""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reviewer.models import ApiToken

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = int(os.environ.get("API_CONTRACT_EXAMPLES", "25"))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_answers_within_its_schema(live_server, demo_runs, users, mode):
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    # with publishing, an incident's updates, the texts ready to publish, the token, the datasets, the policy lab
    # an escalation's snooze ("Not now") and the review analytics
    assert len(operations) == 20

    for operation in operations:
        # A token per operation (a superuser's: every operation is allowed), as revoking it is one of them.
        _, token = ApiToken.issue(users.admin, "schemathesis")
        answers_within_schema(operation, mode, live_server.url, token)


def answers_within_schema(operation, mode, base_url: str, token: str) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def answers(case):
        case.call_and_validate(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    answers()
