"""The policy is read once per unit of work (an HTTP request, a step of a turn: agentserver.db.read_once), so a
step's tool list, provider entry, effective config and model check share one read; a change shows from the
next unit on, and a permission check (fresh) sees it at once. Outside any unit every read is fresh."""
from agentserver.db import read_once


def test_a_change_shows_from_the_next_unit_and_at_once_to_a_fresh_read(alice, set_policy):
    from policy_app.selectors import policy_for_user_id

    person = alice.user.id
    set_policy(max_steps=5)
    with read_once.unit():
        assert policy_for_user_id(person).max_steps().value == 5
        set_policy(max_steps=2)
        assert policy_for_user_id(person).max_steps().value == 5  # this unit's read
        assert policy_for_user_id(person, fresh=True).max_steps().value == 2
    with read_once.unit():
        assert policy_for_user_id(person).max_steps().value == 2
    set_policy(max_steps=3)
    assert policy_for_user_id(person).max_steps().value == 3  # outside a unit


def test_units_are_per_person_and_nest(alice, bob, set_policy):
    from policy_app.selectors import policy_for_user_id

    set_policy(max_steps=4)
    set_policy(group="short", members=[bob], max_steps=1)
    with read_once.unit():
        assert policy_for_user_id(alice.user.id).max_steps().value == 4
        assert policy_for_user_id(bob.user.id).max_steps().value == 1
        set_policy(max_steps=9)
        with read_once.unit():  # a subagent's step inside its parent's
            assert policy_for_user_id(alice.user.id).max_steps().value == 9
        assert policy_for_user_id(alice.user.id).max_steps().value == 4
