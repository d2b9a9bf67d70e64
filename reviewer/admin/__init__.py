"""The review app's admin, one module a concern (as in ``reviewer/models/``):

- ``desk``: escalations with their decisions and approvals, and every decision, read-only (the
  actions export decisions as datasets); the approval rules an admin keeps;
- ``api``: API tokens, made here and shown once, revoked with the list action;
- ``outbox``: delivery channels; published updates and their deliveries, read-only;
- ``status``: the status page's components and its email subscribers;
- ``alerts``: deadline rules, notification channels and holding statements; notifications and
  deadline breaches, read-only;
- ``ledger``: the ledger, read-only;
- ``accounts``: single sign-on's group mappings, and the user admin with where each role came from;
- ``learning``: the guard's scorecard and the amendments mined from decisions (docs/learning-loop.md).

Records that the pipelines and people's decisions write are read-only here, never edited by hand;
settings an admin keeps are editable. Incidents and runs are in the agents app's admin
(``agents/admin/``). Importing this package registers them all (Django's admin autodiscovery imports
``reviewer.admin``); the admin URLs stay the app's: ``/admin/reviewer/<model>/``.
"""

from django.contrib import admin

from reviewer.admin import accounts, alerts, api, desk, learning, ledger, outbox, status

__all__ = ["accounts", "alerts", "api", "desk", "learning", "ledger", "outbox", "status"]

# The admin is part of the product: its name and colours (templates/admin/base_site.html), not Django's.
admin.site.site_header = "Gated review admin"
admin.site.site_title = "Gated review admin"
admin.site.index_title = "Policies, incidents and run records"
# The dashboard: the apps, and the learning loop's pages for those who may see them.
admin.site.index_template = "admin/dashboard.html"
