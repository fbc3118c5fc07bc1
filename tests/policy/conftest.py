"""A policy is a row the live server reads on every request: tests write it with the ORM (committed, as the
personas use the database transactionally) and the server obeys it at once."""
import pytest

from tests.runner.conftest import text_prompt, wait_idle, wait_until  # noqa: F401  (shared with tests here)


@pytest.fixture
def set_policy(transactional_db):
    """set_policy(group=None, **fields): everyone's policy (or the named group's, made if new), replacing
    the scope's earlier one."""
    from django.contrib.auth.models import Group

    from policy_app.models import Policy

    def make(group: str | None = None, members=(), **fields):
        scope = None
        if group is not None:
            scope, _ = Group.objects.get_or_create(name=group)
            for persona in members:
                persona.user.groups.add(scope)
        Policy.objects.filter(group=scope).delete()
        return Policy.objects.create(group=scope, **fields)
    return make


def refusal(response, *, status: int = 403) -> dict:
    """The body of a policy refusal: the spec's error shape, naming the policy."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["name"] == "PolicyError", body
    assert body["data"]["policy"] in body["data"]["message"], body
    return body["data"]
