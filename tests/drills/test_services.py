"""The drills' private servers come back with their data (PostgreSQL) or empty (Redis) after a restart."""

from __future__ import annotations

import pytest
import redis

from tests.services import django_call, migrate, product_env

pytestmark = pytest.mark.postgres


def test_a_restarted_private_postgres_keeps_its_rows_and_redis_comes_back_empty(private_postgres, private_redis,
                                                                                  tmp_path):
    env = product_env(tmp_path, private_postgres.url(), private_redis.url())
    migrate(env)
    django_call(env, "from agents.models import Incident\n"
                     "Incident.objects.create(incident_id='inc_drill', title='Drill', severity='P2')")
    redis.Redis.from_url(private_redis.url()).set("key", "value")

    private_postgres.restart()
    private_redis.restart(hard=True)

    assert django_call(env, "from agents.models import Incident\n"
                            "result = list(Incident.objects.values_list('incident_id', flat=True))") == ["inc_drill"]
    assert redis.Redis.from_url(private_redis.url()).get("key") is None
