"""The learning loop's admin pages: for policy admins only; mining from the page proposes and replays,
and applies nothing."""

from agents.models import PolicyChange
from reviewer.models import Amendment


def test_the_scorecard_and_the_amendments_are_for_policy_admins_only(client, seeded, users, policy_admins):
    seeded(20)
    client.force_login(users.lead)
    assert client.get("/admin/reviewer/amendment/scorecard/").status_code == 302  # to the admin's login
    client.force_login(policy_admins[0])
    page = client.get("/admin/reviewer/amendment/scorecard/")
    assert page.status_code == 200
    assert b"time_commitment" in page.content and b"By policy version" in page.content
    assert b"Guard scorecard" in client.get("/admin/").content  # the dashboard links it


def test_mining_from_the_page_proposes_and_replays_and_applies_nothing(client, seeded, policy_admins, settings):
    settings.LEARNING_MIN_LEADS, settings.LEARNING_MIN_DECISIONS, settings.LEARNING_REPLAY_RUNS = 2, 3, 50
    seeded(40)
    client.force_login(policy_admins[0])
    assert client.get("/admin/reviewer/amendment/mine/").status_code == 405
    response = client.post("/admin/reviewer/amendment/mine/")
    assert response.status_code == 302
    made = list(Amendment.objects.all())
    assert made and all(a.status == "proposed" and a.replay.get("headline") for a in made)
    assert not PolicyChange.objects.exists()
    card = client.get(f"/admin/reviewer/amendment/{made[0].pk}/change/")
    assert card.status_code == 200 and made[0].replay["headline"].encode() in card.content
    refused = client.post(f"/admin/reviewer/amendment/{made[0].pk}/accept/", {"reason": ""}, follow=True)
    assert b"Write the reason" in refused.content and not PolicyChange.objects.exists()
