from tests.sessions.helpers import add_turns, create_session


def test_children_lists_the_sessions_with_this_parent(alice):
    parent = create_session(alice)
    kids = [create_session(alice, parentID=parent["id"]) for _ in range(2)]
    grandchild = create_session(alice, parentID=kids[0]["id"])
    listed = alice.get(f"/session/{parent['id']}/children").json()
    assert {s["id"] for s in listed} == {k["id"] for k in kids}
    assert [s["id"] for s in alice.get(f"/session/{kids[0]['id']}/children").json()] == [grandchild["id"]]
    assert alice.get(f"/session/{grandchild['id']}/children").json() == []


def test_delete_removes_descendants_messages_parts_todos_and_share(alice, anon):
    from sessions_app.models import Message, Part, Session, Share, Todo
    from sessions_app.store.todos import todos_replace

    parent = create_session(alice)
    child = create_session(alice, parentID=parent["id"])
    grandchild = create_session(alice, parentID=child["id"])
    sibling = create_session(alice)
    for session in (parent, child, grandchild, sibling):
        add_turns(session["id"], 2)
    todos_replace(session=Session.objects.get(id=child["id"]),
                  todos=[{"content": "x", "status": "pending", "priority": "high"}])
    url = alice.post(f"/session/{child['id']}/share").json()["share"]["url"]
    assert anon.get(url).status_code == 200

    assert alice.delete(f"/session/{parent['id']}").json() is True
    doomed = [parent["id"], child["id"], grandchild["id"]]
    for sid in doomed:
        assert alice.get(f"/session/{sid}").status_code == 404
    assert not Session.objects.filter(id__in=doomed).exists()
    assert not Message.objects.filter(session_id__in=doomed).exists()
    assert not Part.objects.filter(session_id__in=doomed).exists()
    assert not Todo.objects.filter(session_id__in=doomed).exists()
    assert not Share.objects.filter(session_id__in=doomed).exists()
    assert anon.get(url).status_code == 404
    assert len(alice.get(f"/session/{sibling['id']}/message").json()) == 4
