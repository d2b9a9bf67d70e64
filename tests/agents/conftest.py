"""Helpers of the agents app's tests: post Django admin forms the way a browser would, starting
from the page's own form and changing fields. (The fixtures come from ``tests/conftest.py``.)"""


from django.urls import reverse


def admin_url(model: str, view: str, *args) -> str:
    return reverse(f"admin:agents_{model}_{view}", args=args)


def form_data(response) -> dict:
    """The POST body the admin page's form would send as it stands, inlines included."""
    data = {}

    def add(form):
        for name in form.fields:
            value = form[name].value()
            key = form.add_prefix(name)
            if value is None or value is False:
                continue
            data[key] = "on" if value is True else value if isinstance(value, list) else str(value)

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        for name in formset.management_form.fields:
            data[formset.management_form.add_prefix(name)] = formset.management_form[name].value()
        for form in formset.forms:
            add(form)
    return data


def post_change(client, model: str, obj, **changes):
    url = admin_url(model, "change", obj.pk)
    data = {**form_data(client.get(url)), **changes}
    return client.post(url, data)


def post_add(client, model: str, query: str = "", **fields):
    url = admin_url(model, "add") + query
    data = {**form_data(client.get(url)), **fields}
    return client.post(url, data)
