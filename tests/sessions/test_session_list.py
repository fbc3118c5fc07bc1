import time

from tests.conftest import make_repo
from tests.sessions.helpers import create_session


def test_it_lists_most_recently_updated_first(alice):
    first = create_session(alice, title="first")
    second = create_session(alice, title="second")
    time.sleep(0.005)
    alice.patch(f"/session/{first['id']}", json={"title": "first, touched"})
    listed = alice.get("/session", params={"directory": str(alice.repo)}).json()
    assert [s["id"] for s in listed] == [first["id"], second["id"]]
    updated = [s["time"]["updated"] for s in listed]
    assert updated == sorted(updated, reverse=True)


def test_it_filters_roots_search_start_and_limit(alice):
    parent = create_session(alice, title="Parent alpha")
    child = create_session(alice, parentID=parent["id"], title="child beta")
    params = {"directory": str(alice.repo)}
    ids = lambda r: [s["id"] for s in r.json()]  # noqa: E731
    assert ids(alice.get("/session", params={**params, "roots": "true"})) == [parent["id"]]
    assert ids(alice.get("/session", params={**params, "search": "BETA"})) == [child["id"]]
    assert ids(alice.get("/session", params={**params, "limit": 1})) == [child["id"]]
    future = child["time"]["updated"] + 60_000
    assert ids(alice.get("/session", params={**params, "start": future})) == []
    assert alice.get("/session", params={**params, "limit": "abc"}).status_code == 400
    assert alice.get("/session", params={**params, "roots": "maybe"}).status_code == 400


def test_it_caps_the_list_at_100_by_default(alice):
    from projects_app.models import now_ms
    from sessions_app.models import Session

    template = create_session(alice)
    now = now_ms()
    Session.objects.bulk_create([
        Session(id=f"ses_{n:012x}bulkbulkbulk00", owner=alice.user, project_id=template["projectID"],
                directory=template["directory"], title=f"bulk {n}", version="x", time_created=now, time_updated=now)
        for n in range(120)
    ])
    params = {"directory": str(alice.repo)}
    assert len(alice.get("/session", params=params).json()) == 100
    assert len(alice.get("/session", params={**params, "limit": 500}).json()) == 121


def test_it_lists_only_the_contexts_project_and_subfolder(alice):
    other = make_repo(alice.root / "other", {"OTHER.md": "another project\n"})
    (alice.repo / "src").mkdir()
    at_root = create_session(alice, title="root")
    in_src = create_session(alice, directory=alice.repo / "src", title="src")
    assert in_src["path"] == "src"
    elsewhere = create_session(alice, directory=other, title="other")

    from_root = [s["id"] for s in alice.get("/session", params={"directory": str(alice.repo)}).json()]
    assert set(from_root) == {at_root["id"], in_src["id"]}
    from_src = [s["id"] for s in alice.get("/session", params={"directory": str(alice.repo / "src")}).json()]
    assert from_src == [in_src["id"]]
    from_other = [s["id"] for s in alice.get("/session", params={"directory": str(other)}).json()]
    assert from_other == [elsewhere["id"]]
    by_path = alice.get("/session", params={"directory": str(alice.repo), "path": "src"}).json()
    assert [s["id"] for s in by_path] == [in_src["id"]]


def test_bob_never_sees_alices_sessions(alice, bob):
    create_session(alice)
    assert bob.get("/session").json() == []
    assert bob.get("/session", params={"directory": str(alice.repo)}).status_code in (400, 403)


def test_every_listing_path_renders_a_session_as_its_own_route_does(alice):
    """The plain listing reads rows straight into wire objects; the filtered (ORM) listings, the v2 pages and
    GET /session/{id} render model instances. A session with every optional field set reads the same on all."""
    from sessions_app.models import Session

    parent = create_session(alice, title="full parent", metadata={"big": 2 ** 70, "nested": {"k": [1, "x"]}})
    full = create_session(alice, parentID=parent["id"], title="full child", agent="plan",
                          model={"providerID": "p", "modelID": "m"},
                          permission=[{"permission": "bash", "pattern": "*", "action": "deny"}])
    create_session(alice, title="full bare")
    Session.objects.filter(id=full["id"]).update(
        summary={"additions": 3, "deletions": 1, "files": 2, "diffs": []},
        revert={"messageID": "msg_x", "partID": "prt_y", "snapshot": "abc", "diff": "d"},
        time_compacting=1_700_000_000_000, time_archived=1_700_000_000_001, cost=0.25,
        tokens={"input": 5, "output": 7, "reasoning": 0, "cache": {"read": 1, "write": 2}})
    assert alice.post(f"/session/{parent['id']}/share").status_code == 200
    where = {"directory": str(alice.repo)}
    own = {s["id"]: alice.get(f"/session/{s['id']}").json() for s in alice.get("/session", params=where).json()}
    assert len(own) == 3 and "share" in own[parent["id"]] and own[full["id"]]["summary"]["files"] == 2
    assert own[parent["id"]]["metadata"]["big"] == 2 ** 70
    listings = [alice.get("/session", params=where).json(),
                alice.get("/session", params={**where, "search": "full"}).json()]
    for listing in listings:
        assert {s["id"]: s for s in listing} == own
    v2 = [alice.get("/api/session", params=where).json()["data"],
          alice.get("/api/session", params={**where, "search": "full"}).json()["data"]]
    # v2's shape is opencode's SessionV2Info: where the session is, instead of 1.18's directory and path
    v2_keys = {"id", "projectID", "parentID", "title", "agent", "model", "cost", "tokens", "time", "revert"}
    for page in v2:
        for s in page:
            one = own[s["id"]]
            assert s["location"]["directory"] == one["directory"] and s["subpath"] == one["path"]
            assert {k: v for k, v in s.items() if k not in ("location", "subpath")} == {
                k: ({t: w for t, w in v.items() if t != "compacting"} if k == "time" else v)
                for k, v in one.items() if k in v2_keys}
