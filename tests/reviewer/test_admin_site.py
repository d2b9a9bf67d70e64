"""The admin site as a policy admin meets it: branded as the product, a help text on every switch, a
restricted-claim pattern tried on sample text before saving, and one incident model (the technical
specialist's service statuses are named as what they are)."""

import re

import pytest
from django.contrib import admin
from django.db import models
from django.urls import reverse

from agents.models import PipelinePolicy, PolicyChange, RestrictedClaim, RouteTarget

pytestmark = pytest.mark.django_db


def test_the_admin_is_branded_as_the_product(login):
    page = login("admin").get(reverse("admin:index")).content.decode()

    assert "<title>Policies, incidents and run records | Gated review admin</title>" in page
    assert '<a href="/admin/">Gated review admin</a>' in page
    assert "Django administration" not in page and "Django site admin" not in page
    assert re.search(r'<link rel="stylesheet" href="/static/css/admin\.[0-9a-f.]*css">', page)


def test_the_login_page_is_branded_too(client):
    page = client.get(reverse("admin:login")).content.decode()

    assert "Gated review admin" in page and "Django administration" not in page


def switches():
    """Every on/off field of every model of the product's apps in admin: (model, field)."""
    return [(model, field) for model in admin.site._registry if model._meta.app_label in ("agents", "reviewer")
            for field in model._meta.fields if isinstance(field, models.BooleanField)]


def test_every_switch_in_admin_has_a_help_text():
    found = switches()

    assert len(found) >= 10
    missing = [f"{model.__name__}.{field.name}" for model, field in found if not str(field.help_text).strip()]
    assert missing == []


def test_the_allowlist_switches_say_what_policy_and_execution_mean():
    route_policy = str(RouteTarget._meta.get_field("allowed_policy").help_text)
    route_execution = str(RouteTarget._meta.get_field("allowed_execution").help_text)
    decisions_policy = str(PipelinePolicy._meta.get_field("decisions_policy").help_text)
    decisions_execution = str(PipelinePolicy._meta.get_field("decisions_execution").help_text)

    assert "invalid_route:route_not_allowed" in route_policy and "route_denied" in route_execution
    assert decisions_policy.startswith("Allowed by policy:") and decisions_execution.startswith("Allowed in execution:")


def test_the_auto_revision_help_says_off_stops_revisions_for_a_person(login):
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)

    page = login("admin").get(reverse("admin:agents_pipelinepolicy_change", args=[policy.pk])).content.decode()

    help_text = str(PipelinePolicy._meta.get_field("auto_revision").help_text)
    assert "Off: “revise” leaves execution" in help_text and "goes to a person" in help_text
    assert help_text.replace("“", "&ldquo;")[:40] in page or help_text[:40] in page
    for name in ("decisions_policy", "decisions_execution", "active"):
        assert str(PipelinePolicy._meta.get_field(name).help_text)[:30] in page


def test_the_admin_shows_one_incident_model(login):
    page = login("admin").get(reverse("admin:index")).content.decode()

    names = [str(model._meta.verbose_name_plural) for model in admin.site._registry]
    assert [name for name in names if re.search(r"\bincidents?\b", name, re.IGNORECASE)] == ["incidents"]
    assert ">Incidents</a>" in page and ">Service incidents</a>" not in page
    assert ">Service statuses (technical specialist)</a>" in page


def test_saving_a_claim_family_with_sample_text_shows_the_matches_and_stores_no_sample(login):
    client = login("admin")
    row = RestrictedClaim.objects.get(family="recovered")
    url = reverse("admin:agents_restrictedclaim_change", args=[row.pk])
    form = {name: getattr(row, name) for name in ("family", "kind", "pattern", "paraphrases", "support", "supported_by",
                                                "hedges", "hedging", "note")}
    form.update(enabled="on", note="tried on a sample", sample_text="Checkout is back to normal.", _continue="1")

    response = client.post(url, form, follow=True)

    page = response.content.decode()
    assert response.redirect_chain and response.redirect_chain[-1][0].endswith(url)
    assert "On the sample text: “back to normal” (a claim" in page.replace("&ldquo;", "“").replace("&rdquo;", "”")
    row.refresh_from_db()
    change = PolicyChange.objects.filter(model_label="agents.restrictedclaim").latest("at")
    assert row.note == "tried on a sample" and "Checkout is back to normal." not in str(change.after)
