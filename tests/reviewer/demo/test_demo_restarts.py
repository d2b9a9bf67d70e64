"""When the demo starts a child again that ended (reviewer/management/commands/demo.py, RestartPolicy):
at once after a long life, after a doubling pause after quick failures, never after five in a row."""

from reviewer.management.commands.demo import RestartPolicy

QUICK = RestartPolicy.QUICK_SECONDS


def test_a_child_that_ran_long_is_started_again_at_once():
    policy = RestartPolicy()
    policy.started(0)
    assert policy.ended(QUICK + 1) == 0


def test_quick_failures_in_a_row_double_the_pause_until_the_demo_gives_up():
    policy, now, pauses = RestartPolicy(), 0.0, []
    for _ in range(RestartPolicy.GIVE_UP_AFTER):
        policy.started(now)
        now += 2  # it ends two seconds after each start
        pauses.append(policy.ended(now))
    assert pauses == [1, 2, 4, 8, None]


def test_a_long_life_between_quick_failures_starts_the_count_again():
    policy = RestartPolicy()
    policy.started(0)
    assert policy.ended(1) == 1
    policy.started(2)
    assert policy.ended(3) == 2
    policy.started(4)
    assert policy.ended(4 + QUICK) == 0  # a child that lived QUICK_SECONDS is not failing quickly
    policy.started(100)
    assert policy.ended(101) == 1
