"""An approval rule that can no longer be met says so at once: too few active members of its group who may
approve are left (deactivated, taken out of the group, already approved, or the author of the text). The
escalation page says it, and the channels that want it (policy admins') are told once, when it happens."""

import pytest
from django.urls import reverse
from django.utils.html import strip_tags

from reviewer.alerts import notifications
from reviewer.alerts.tasks import send_notification
from reviewer.desk import approvals, decisions
from reviewer.models import Notification, NotificationChannel
from reviewer.roles import SUPPORT_LEAD
from tests.factories import make_escalation, make_incident, make_user
from tests.reviewer.alerts.test_notifications import Receiver

EDITED = "We are investigating a problem in the EU. Current status: degraded. We will update you soon."


@pytest.fixture
def receiver(monkeypatch):
    started = Receiver()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"admins-hook={started.url}")
    yield started
    started.stop()


@pytest.fixture
def admins_channel(receiver):
    return NotificationChannel.objects.create(name="policy admins", destination="admins-hook", group="admins",
                                              events=["unmeetable"])


@pytest.fixture
def lead3(users):
    return make_user("lead3", group=SUPPORT_LEAD, first_name="Lotte")


@pytest.fixture
def two_of_three(users, lead3):
    return make_escalation(incident=make_incident("inc_quorum_1", severity="P1"), required_approvals=2)


def read(html: str) -> str:
    return " ".join(strip_tags(html).split())


def test_a_rule_with_enough_members_left_is_in_reach(two_of_three, users):
    assert approvals.shortfall(two_of_three) is None
    approvals.add(two_of_three, users.lead)
    assert approvals.shortfall(two_of_three) is None  # one more of two leads left


def test_deactivated_and_removed_members_and_those_who_approved_leave_it_out_of_reach(two_of_three, users, lead3):
    decisions.decide(two_of_three.pk, users.lead, "approve")  # 1 of 2
    users.lead2.is_active = False
    users.lead2.save()
    assert approvals.shortfall(two_of_three) is None  # Lotte is left

    lead3.groups.clear()

    short = approvals.shortfall(two_of_three)
    assert (short.needed, short.left, short.group) == (1, (), SUPPORT_LEAD)
    assert short.sentence.startswith("This approval rule can no longer be met: the text needs 1 more approval from "
                                     "members of “Support leads”, and no member who may approve it is left.")


def test_the_author_of_the_text_cannot_count_towards_it(users):
    escalation = make_escalation(incident=make_incident("inc_quorum_2"), required_approvals=2)  # two leads exist

    decisions.decide(escalation.pk, users.lead, "edit_approve", text=EDITED)  # the edit is Lena's text now

    escalation.refresh_from_db()
    short = approvals.shortfall(escalation)
    assert (short.needed, short.left) == (2, ("Lars",))
    assert "only 1 member who may approve it is left (Lars)" in short.sentence


def test_the_escalation_page_says_so_to_everyone_who_reads_it(login, two_of_three, users, lead3):
    users.lead2.groups.clear()
    lead3.groups.clear()

    for name in ("lead", "ops"):
        page = read(login(name).get(reverse("escalation", args=[two_of_three.pk])).content.decode())
        assert ("This approval rule can no longer be met: the text needs 2 more approvals from members of "
                "“Support leads”, and only 1 member who may approve it is left (Lena).") in page


def test_policy_admins_channel_is_told_once_when_a_member_is_taken_out(
        two_of_three, users, lead3, admins_channel, receiver, django_capture_on_commit_callbacks, settings):
    settings.SITE_URL = "https://review.example.com/"
    with django_capture_on_commit_callbacks(execute=True):
        users.lead2.groups.clear()  # Lena and Lotte are left: still in reach
    assert not Notification.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        lead3.is_active = False
        lead3.save()
    with django_capture_on_commit_callbacks(execute=True):
        lead3.groups.clear()  # told already: not again

    notice = Notification.objects.get()
    assert (notice.escalation_id, notice.event, notice.channel) == (two_of_three.pk, "unmeetable", admins_channel)
    assert send_notification.apply(args=[notice.pk]).get() == "sent"
    [body] = receiver.bodies
    assert body["title"] == (f"Approval rule out of reach: escalation #{two_of_three.pk} cannot get the approvals "
                             "it needs")
    assert "too few members of the group who may approve are left" in body["message"]
    assert f"https://review.example.com/escalations/{two_of_three.pk}/" in body["message"]


def test_an_edit_that_puts_the_rule_out_of_reach_tells_at_once(users, admins_channel):
    escalation = make_escalation(incident=make_incident("inc_quorum_3"), required_approvals=2)

    decisions.decide(escalation.pk, users.lead, "edit_approve", text=EDITED)

    assert Notification.objects.filter(escalation=escalation, event="unmeetable").count() == 1


def test_a_rule_in_reach_tells_nobody(two_of_three, users, admins_channel):
    assert approvals.tell_if_unmeetable() == []
    assert notifications.enqueue_many([], "unmeetable") == []
    assert not Notification.objects.exists()
