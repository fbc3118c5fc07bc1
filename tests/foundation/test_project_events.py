"""A project seen for the first time and project.update are announced on the owner's event streams, and only there."""
from tests.events.sse_client import open_stream


def test_project_update_publishes_project_updated(alice, bob):
    project_id = alice.get("/project/current", params={"directory": str(alice.repo)}).json()["id"]
    with open_stream(alice, "/global/event") as alices, open_stream(bob, "/global/event") as bobs:
        alices.next()
        bobs.next()
        assert alice.patch(f"/project/{project_id}", json={"name": "Evented"}).status_code == 200
        frame, _ = alices.until(lambda data: data["payload"]["type"] == "project.updated")
        assert frame.data["payload"]["properties"]["id"] == project_id
        assert frame.data["payload"]["properties"]["name"] == "Evented"
        # bob's first look at his directory creates his project: announced as well, then his rename.
        bobs_project = bob.get("/project/current", params={"directory": str(bob.repo)}).json()["id"]
        frame, _ = bobs.until(lambda data: data["payload"]["type"] == "project.updated")
        assert frame.data["payload"]["properties"]["id"] == bobs_project and frame.data["directory"] == "global"
        bob.patch(f"/project/{bobs_project}", json={"name": "Bob's"})
        frame, seen = bobs.until(lambda data: data["payload"]["type"] == "project.updated")
        assert frame.data["payload"]["properties"]["name"] == "Bob's"
        assert all(f.data["payload"].get("properties", {}).get("name") != "Evented" for f in seen)
