"""The learning loop's fixtures: a seeded history of real runs and leads' decisions, and a policy admin."""

import pytest

from reviewer.learning.seed import seed
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_user


@pytest.fixture
def seeded(demo_data):
    """``seeded(count)``: that many runs of the seeded history, decided by its five leads."""
    return lambda count: seed(count)


@pytest.fixture
def policy_admins(db):
    """Two policy admins (staff, not superusers: what their role lets them do, no more)."""
    admins = []
    for name in ("pia", "paul"):
        user = make_user(name, group=POLICY_ADMIN)
        user.is_staff = True
        user.save()
        admins.append(user)
    return admins
