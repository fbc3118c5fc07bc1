from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.sessions.helpers import create_session


def test_concurrent_updates_of_different_fields_lose_nothing(alice):
    from sessions_app.models import Session
    from sessions_app.store.todos import todos_replace

    session = create_session(alice)
    url = f"{alice.base_url}/session/{session['id']}"
    headers = {"Authorization": f"Bearer {alice.token}"}
    rules = [{"permission": "bash", "pattern": "*", "action": "deny"}]
    todos = [{"content": f"task {n}", "status": "pending", "priority": "low"} for n in range(3)]
    bodies = ([{"title": "final title"}] + [{"time": {"archived": 1700000000000}}] + [{"permission": rules}]
              + [{"metadata": {"k": "v"}}]) * 5

    def patch(body):
        with httpx.Client(headers=headers, timeout=60) as client:
            return client.patch(url, json=body).status_code

    def write_todos(_):
        todos_replace(session=Session.objects.get(id=session["id"]), todos=todos)
        return 200

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(patch, bodies)) + list(pool.map(write_todos, range(3)))
    assert results == [200] * 23
    final = alice.get(f"/session/{session['id']}").json()
    assert final["title"] == "final title"
    assert final["time"]["archived"] == 1700000000000
    assert final["permission"] == rules
    assert final["metadata"] == {"k": "v"}
    assert [t["content"] for t in alice.get(f"/session/{session['id']}/todo").json()] == \
        ["task 0", "task 1", "task 2"]
