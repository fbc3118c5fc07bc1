"""project.update announces the new project on the caller's event streams, and only there."""
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
        bob.patch(f"/project/{bob.get('/project/current', params={'directory': str(bob.repo)}).json()['id']}",
                  json={"name": "Bob's"})
        frame, seen = bobs.until(lambda data: data["payload"]["type"] == "project.updated")
        assert frame.data["payload"]["properties"]["name"] == "Bob's"
        assert all(f.data["payload"].get("properties", {}).get("name") != "Evented" for f in seen)
