"""The policy stamp: one number the database changes whenever a row a policy is built from changes.

Every table :func:`agents.policy_rows.load_policy` reads has a trigger that writes a new random stamp
into the one row of ``agents_policystamp``, in the transaction of the change, whatever made it (admin,
the policy lab, a shell, an ``UPDATE`` in a database client, a data migration). A worker keeps the
snapshot of a pipeline's policy by that stamp (``agents.policy_rows.active_policy_snapshot``), so a
run reads one row to know that nothing changed instead of the tables themselves.

The triggers are (re)made after every ``migrate`` and ``flush`` (a post_migrate hook), and the stamp
is then changed: SQLite drops a table's triggers with the table when a migration rebuilds it, and a
flush or a data migration may change the rows while no trigger is there. With no stamp row (a table
just flushed) there is no version, and nothing is kept.
"""

from __future__ import annotations

from django.db import connections

from agents.models import (
    GroundingTerm,
    IssueType,
    PipelinePolicy,
    PolicyStamp,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    StagePrompt,
)

# The tables a policy is built from (tests/agents/test_active_policy_snapshot.py checks that
# load_policy reads no other).
STAMPED = (PipelinePolicy, StagePrompt, IssueType, RestrictedClaim, RegionToken, GroundingTerm, RouteTarget)
STAMP_ROW = 1
TRIGGER = "agents_policy_stamp"
OPERATIONS = ("INSERT", "UPDATE", "DELETE")

_UPSERT = ('INSERT INTO "{stamp}" ("id", "stamp") VALUES ({row}, {random}) '
           'ON CONFLICT ("id") DO UPDATE SET "stamp" = excluded."stamp"')
# random(): SQLite's is a 64-bit integer; PostgreSQL's a float in [0, 1), scaled to most of a bigint.
_RANDOM = {"sqlite": "random()", "postgresql": "(random() * 9.0e18)::bigint"}


def read_stamp(using: str = "default") -> int | None:
    """The current stamp (one plain query), or None when there is none yet."""
    with connections[using].cursor() as cursor:
        cursor.execute(f'SELECT "stamp" FROM "{PolicyStamp._meta.db_table}" WHERE "id" = %s', [STAMP_ROW])
        row = cursor.fetchone()
    return None if row is None else row[0]


def install_triggers(using: str = "default") -> None:
    """Make (again) every stamped table's trigger and change the stamp."""
    connection = connections[using]
    upsert = _UPSERT.format(stamp=PolicyStamp._meta.db_table, row=STAMP_ROW, random=_RANDOM[connection.vendor])
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"CREATE OR REPLACE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS "
                           f"$$ BEGIN {upsert}; RETURN NULL; END $$")
        for model in STAMPED:
            table = model._meta.db_table
            for statement in _trigger_statements(connection.vendor, table, upsert):
                cursor.execute(statement)
        cursor.execute(upsert)


def drop_triggers(using: str = "default") -> None:
    """Remove every stamped table's trigger (migrating back to before the stamp)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        for model in STAMPED:
            table = model._meta.db_table
            if connection.vendor == "postgresql":
                cursor.execute(f'DROP TRIGGER IF EXISTS {TRIGGER} ON "{table}"')
            else:
                for operation in OPERATIONS:
                    cursor.execute(f'DROP TRIGGER IF EXISTS "{TRIGGER}_{table}_{operation.lower()}"')
        if connection.vendor == "postgresql":
            cursor.execute(f"DROP FUNCTION IF EXISTS {TRIGGER}()")


def _trigger_statements(vendor: str, table: str, upsert: str) -> list[str]:
    if vendor == "postgresql":  # once a statement, TRUNCATE (a flush) included
        return [f'DROP TRIGGER IF EXISTS {TRIGGER} ON "{table}"',
                f'CREATE TRIGGER {TRIGGER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "{table}" '
                f"FOR EACH STATEMENT EXECUTE FUNCTION {TRIGGER}()"]
    statements = []
    for operation in OPERATIONS:  # SQLite has row triggers only: once a row (admins change a few)
        name = f'"{TRIGGER}_{table}_{operation.lower()}"'
        statements += [f"DROP TRIGGER IF EXISTS {name}",
                       f'CREATE TRIGGER {name} AFTER {operation} ON "{table}" BEGIN {upsert}; END']
    return statements


def install_triggers_after_migrate(sender, using="default", apps=None, **kwargs) -> None:
    """The post_migrate hook; nothing to do while the stamp's table does not exist (migrated back)."""
    if PolicyStamp._meta.db_table in connections[using].introspection.table_names():
        install_triggers(using)
