"""The emergency brake: with auto-revision off, a revision the reviewer asks for stops with its public
stop reason and opens an escalation a lead decides; every page says which pipelines the brake
holds."""

import importlib

import pytest
from django.apps import apps
from django.urls import reverse

from agents.models import PipelinePolicy, Review, Run
from agents.tasks import run_now, start_run
from reviewer.models import Escalation
from tests import factories

LABEL = "stopped by the emergency brake"
BANNER = "Emergency brake on:"


@pytest.fixture
def braked_run(demo_data):
    """A real reflection run (offline model) whose reviewer asked for a revision, with the brake on."""
    PipelinePolicy.objects.filter(pipeline="reflection").update(auto_revision=False)
    run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    run_now(run.pk)
    return Run.objects.get(pk=run.pk)


def test_the_inbox_and_the_escalation_page_label_a_brake_stop_with_its_fix_plan(login, braked_run):
    escalation = Escalation.objects.get(run=braked_run)
    client = login("lead")

    inbox = client.get(reverse("inbox")).content.decode()
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert f'id="esc-row-{escalation.pk}"' in inbox and LABEL in inbox
    assert "review_decision_denied_execution:revise" in inbox  # the stop reason as it is
    assert LABEL in page and "the emergency brake" in page
    for instruction in Review.objects.get(run=braked_run).instructions:  # the fix plan is on the page
        assert instruction.replace('"', "&quot;") in page
    assert escalation.draft.split()[0] in page
    # The fix plan the brake stopped is offered as the instructions of a request for changes.
    plan = "\n".join(Review.objects.get(run=braked_run).instructions).replace('"', "&quot;")
    assert f"{plan}</textarea>" in page and "Filled in with the fix plan the emergency brake stopped" in page


def test_a_brake_stop_is_not_a_failed_run_with_a_retry(login, braked_run):
    client = login("ops")

    failed = client.get(reverse("failed_runs")).content.decode()
    run_page = client.get(reverse("run", args=[braked_run.pk])).content.decode()
    retry = client.post(reverse("run_retry", args=[braked_run.pk]))

    assert reverse("run", args=[braked_run.pk]) not in failed
    assert reverse("run_retry", args=[braked_run.pk]) not in run_page
    assert retry.status_code == 302 and Run.objects.filter(retry_of=braked_run).count() == 0


def test_a_policy_escalation_carries_no_brake_label(login, db):
    escalation = factories.make_escalation(stop_reason="policy_escalation")
    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert LABEL not in page


@pytest.mark.parametrize("who", ["lead", "ops", "admin"])
def test_every_page_shows_the_banner_naming_the_braked_pipelines_while_the_brake_is_on(login, demo_data, who):
    client = login(who)
    urls = [reverse("home"), reverse("incidents"), reverse("runs"), reverse("failed_runs")]
    if who == "lead":
        urls.append(reverse("inbox"))

    for url in urls:
        assert BANNER not in client.get(url).content.decode(), url

    PipelinePolicy.objects.filter(pipeline__in=["reflection", "self_critique"]).update(auto_revision=False)
    for url in urls:
        html = client.get(url).content.decode()
        assert BANNER in html and "auto-revision is off for Reflection, Self-critique." in html, url

    PipelinePolicy.objects.filter(pipeline="reflection").update(auto_revision=True)
    html = client.get(reverse("home")).content.decode()
    assert "auto-revision is off for Self-critique." in html


def test_the_migration_opens_escalations_for_brake_stops_made_before(braked_run):
    Escalation.objects.filter(run=braked_run).delete()  # as a run stopped before this change was left
    assert Run.objects.failed().filter(pk=braked_run.pk).exists() is False  # and no longer listed as failed

    migration = importlib.import_module("reviewer.migrations.0008_brake_escalations")
    migration.open_brake_escalations(apps, None)
    migration.open_brake_escalations(apps, None)  # twice: still one

    escalation = Escalation.objects.get(run=braked_run)
    assert escalation.stopped_by_brake and escalation.draft and escalation.candidate == escalation.draft
