"""The incidents and run records move to the agents app (one import direction: reviewer -> agents).

Step 1 of 3: rename their tables to the names the agents app gives them. Nothing is copied; foreign
keys follow the renamed tables. Step 2 is agents 0003 (the models appear there, state only), step 3
reviewer 0004 (they leave here, state only).
"""

from django.db import migrations

MOVED = ("incident", "run", "tracestep", "modelcall", "review", "auditdiff")


class Migration(migrations.Migration):

    dependencies = [
        ("reviewer", "0002_dashboard_and_inbox_indexes"),
    ]

    operations = [migrations.AlterModelTable(name=name, table=f"agents_{name}") for name in MOVED]
