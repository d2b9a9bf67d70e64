"""POST /api/policy-lab/preview: the policy lab for other systems, for policy admins only."""

from agents.core.llm.offline import OfflineModel
from agents.models import PolicyChange, RouteTarget
from agents.tasks import run_now, start_run


def routing_run(goal):
    run, _ = start_run(pipeline="routing", goal=goal, enqueue=False)
    run_now(run.pk, llm=OfflineModel())
    return run


def test_a_policy_admin_previews_a_route_switched_off(api, demo_data):
    billing = routing_run("Please refund my last payment, I was charged twice. user_id=42")
    routing_run("How much is the team plan?")
    response = api("admin").post("/policy-lab/preview", {
        "kind": "route", "key": "billing_specialist",
        "changes": {"allowed_policy": False, "allowed_execution": False}, "last": 10})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["counts"]["would_stop"] == 1 and body["counts"]["unchanged"] == 1
    assert body["flipped"] == [{"run_id": billing.pk, "pipeline": "routing", "verdict": "would_stop",
                                "before": "success", "after": "invalid_route:route_not_allowed:billing_specialist",
                                "note": "", "url": f"/runs/{billing.pk}/"}]
    assert body["window"] == "the 2 stored runs"  # all there are: fewer than the 10 asked for
    assert RouteTarget.objects.get(name="billing_specialist").allowed_policy is True
    assert not PolicyChange.objects.exists()


def test_only_those_who_may_change_policies_can_preview(api, demo_data):
    for name in ("lead", "ops"):
        response = api(name).post("/policy-lab/preview", {"kind": "route", "key": "billing_specialist"})
        assert response.status_code == 403
        assert "Only policy admins" in response.json()["message"]


def test_a_change_it_cannot_preview_is_refused_saying_why(api, demo_data):
    cases = [
        ({"kind": "route", "key": "billing_specialist", "changes": {"colour": "red"}}, "has no field 'colour'"),
        ({"kind": "policy", "key": "reflection", "changes": {"max_answer_chars": 5}}, "Must be between 50 and 20000"),
        ({"kind": "claim", "key": "9" * 40}, "no restricted claim"),
        ({"kind": "policy", "key": "reflection", "since": "2026-05-02", "until": "2026-05-01"}, "not valid"),
        ({"kind": "claim", "changes": {"family": "x\u0007"}}, "control character"),
    ]
    for body, message in cases:
        response = api("admin").post("/policy-lab/preview", body)
        assert response.status_code == 422, (body, response.json())
        assert message in response.json()["message"], (body, response.json())


def test_a_preview_while_another_of_the_same_person_runs_or_over_its_budget_is_refused(api, users, demo_data,
                                                                                       settings):
    from agents.lab import one_preview_per_person

    routing_run("How much is the team plan?")
    body = {"kind": "route", "key": "billing_specialist",
            "changes": {"allowed_policy": False, "allowed_execution": False}}
    admin = api("admin")
    with one_preview_per_person(users.admin.pk):
        busy = admin.post("/policy-lab/preview", body)
    settings.POLICY_LAB_CPU_SECONDS = 0
    over = admin.post("/policy-lab/preview", body)

    assert busy.status_code == 429 and "preview running already" in busy.json()["message"]
    assert over.status_code == 422 and "processor time" in over.json()["message"]
