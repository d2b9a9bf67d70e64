"""Shared fixtures: named users for every role, the demo incident data, real runs made by the
offline model. Test modules build on these instead of inventing their own users."""

from types import SimpleNamespace

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD

pytest_plugins = ["tests.fixtures_llm", "tests.fixtures_scripted", "tests.fixtures_worker", "tests.fixtures_browser"]

settings.VAR_DIR.mkdir(parents=True, exist_ok=True)  # SQLite's test database file lives here
settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing folder

PASSWORD = "a-test-password"  # test users only


def make_user(username: str, *, group: str | None = None, staff: bool = False, **fields):
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, is_staff=staff,
                                                is_superuser=staff, **fields)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def users(db):
    """A support lead, a second lead, an ops person, an admin and an outsider with no role."""
    return SimpleNamespace(
        lead=make_user("lead", group=SUPPORT_LEAD, first_name="Lena"),
        lead2=make_user("lead2", group=SUPPORT_LEAD, first_name="Lars"),
        ops=make_user("ops", group=OPS, first_name="Omar"),
        admin=make_user("admin", group=POLICY_ADMIN, staff=True),
        outsider=make_user("outsider"),
    )


@pytest.fixture
def login(client, users):
    """``login("lead")`` logs the test client in as that user and returns the client."""

    def log_in(name: str):
        client.force_login(getattr(users, name))
        return client

    return log_in


@pytest.fixture
def demo_data(db):
    """The demo incidents and the customers, plans and payments the routing specialists read."""
    from agents.store import load_demo_data
    from reviewer.demo import load_incidents

    load_demo_data()
    return {incident.incident_id: incident for incident in load_incidents()}


@pytest.fixture
def demo_runs(demo_data, users):
    """The demo set of runs, made for real by the offline model: approved, revised, escalated,
    blocked and failed runs with their trace steps, model calls, reviews, audits and escalations."""
    from reviewer.demo import run_demo_pipelines

    return run_demo_pipelines(user=users.ops)
