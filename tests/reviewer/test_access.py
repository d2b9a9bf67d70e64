"""Every URL of the product, crawled by every role: anonymous visitors go to the login page, people
without the permission get the 403 page, nobody ever gets a 500."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from agents.models import Run
from reviewer.models import Escalation
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_user

# The public status page (every page of it) and subscribing to it need no login, nor does logging in
# (single sign-on's start and callback are logging in: tests/reviewer/accounts/test_sso.py).
PUBLIC = {"login", "logout", "sso_start", "sso_callback", "status", "status_history", "status_incident",
          "status_feed", "status_feed_rss", "status_summary", "status_json", "status_subscribe", "status_confirm",
          "status_unsubscribe", "status_components", "status_incidents", "status_unresolved"}
PUBLIC |= {"status_maintenances", "status_maintenances_upcoming", "status_maintenances_active",
           "status_feed_language", "status_feed_rss_language"}
# An audience's pages answer 404 without its signed link or a signed-in reader of it, never a login page
# (which would say that the audience exists): tests/reviewer/status/test_audiences.py.
PUBLIC |= {"status_audience", "status_audience_signed", "status_audience_part"}
# Read by machines, not people: /metrics answers by network and token, never by login
# (tests/reviewer/operations/test_metrics.py refuses an address outside the allowed networks and a wrong token).
MACHINES = {"metrics"}


def product_urls(patterns=None):
    """(name, parameter names) of every named URL outside the admin site and the API: the root's and
    those of each concern's urls.py it includes."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver) and not pattern.namespace:
            yield from product_urls(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and pattern.name and pattern.name not in PUBLIC | MACHINES:
            yield pattern.name, list(pattern.pattern.converters)


@pytest.fixture
def url_args(demo_runs):
    run = Run.objects.filter(status="stopped").first()
    return {"pk": {"run": run.pk, "run_trace": run.pk, "run_retry": run.pk}, "incident_id": "inc_pay_2041",
            "escalation_pk": Escalation.objects.first().pk, "language": "fr"}


def resolve(name, params, url_args):
    kwargs = {}
    for param in params:
        if param == "pk":
            kwargs["pk"] = url_args["pk"].get(name, url_args["escalation_pk"])
        else:
            kwargs[param] = url_args[param]
    return reverse(name, kwargs=kwargs)


def test_the_crawl_covers_every_page_and_action():
    names = {name for name, _ in product_urls()}
    assert {"home", "incidents", "incident", "start_run", "run", "run_trace", "run_retry", "runs", "failed_runs",
            "inbox", "escalation", "escalation_check", "escalation_decide", "escalation_take",
            "escalation_release"} <= names


@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_visitors_are_sent_to_login_everywhere(client, url_args, method):
    for name, params in product_urls():
        url = resolve(name, params, url_args)
        response = getattr(client, method)(url)
        assert response.status_code in (302, 403), (name, response.status_code)
        if response.status_code == 302:
            assert response["Location"].startswith(reverse("login")), name
    assert Escalation.objects.filter(status="pending").count() == 2  # nothing was decided


@pytest.mark.parametrize("role", ["lead", "ops", "admin", "outsider"])
def test_no_page_answers_500_to_any_role(login, url_args, role):
    client = login(role)
    for name, params in product_urls():
        url = resolve(name, params, url_args)
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            assert response.status_code < 500, (role, method, name, response.status_code)
            if response.status_code == 403:
                assert "Not allowed" in response.content.decode(), (role, name)


@pytest.mark.parametrize("role, name, allowed", [
    ("outsider", "inbox", False), ("ops", "inbox", False), ("lead", "inbox", True),
    ("outsider", "escalation", False), ("ops", "escalation", True), ("policy_admin", "escalation", True),
    ("outsider", "run", False), ("ops", "run", True), ("lead", "run", True),
    ("outsider", "failed_runs", False), ("ops", "failed_runs", True),
    ("outsider", "home", False), ("lead", "home", True), ("ops", "home", True), ("policy_admin", "home", True),
    ("outsider", "incidents", False), ("lead", "incidents", True), ("ops", "incidents", True),
    ("policy_admin", "incidents", True),
    ("outsider", "incident", False), ("lead", "incident", True), ("ops", "incident", True),
    ("policy_admin", "incident", True), ("policy_admin", "run", True),
    ("outsider", "analytics", False), ("ops", "analytics", False), ("lead", "analytics", True),
    ("policy_admin", "analytics", True),
])
def test_pages_follow_the_roles(client, login, url_args, policy_admin, role, name, allowed):
    params = [p for n, p in product_urls() if n == name][0]
    if role == "policy_admin":
        client.force_login(policy_admin)
    else:
        client = login(role)
    response = client.get(resolve(name, params, url_args))
    assert (response.status_code == 200) is allowed, response.status_code


def make_policy_admin(username="policy-admin"):
    """A policy admin as the demo makes one: staff for the admin site, not a superuser."""
    user = make_user(username, group=POLICY_ADMIN)
    user.is_staff = True
    user.save()
    return user


@pytest.fixture
def policy_admin(users):
    return make_policy_admin()


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_logged_in_user_without_a_role_gets_403_on_every_page(login, url_args, method):
    """Logged in, but in no group: no page of the product, not even the dashboard or the incident
    pages (run goals, statuses and who started them), and the 403 page says what is missing."""
    client = login("outsider")
    for name, params in product_urls():
        response = getattr(client, method)(resolve(name, params, url_args))
        assert response.status_code == 403, (method, name, response.status_code)
        assert "no role yet" in response.content.decode(), name
        assert "payment degradation" not in response.content.decode(), name  # no incident title, no goal
    assert Escalation.objects.filter(status="pending").count() == 2
