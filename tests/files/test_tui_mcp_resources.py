"""GET /experimental/resource: the connected MCP servers' resources in opencode's keyed map."""
from tests.files.helpers import params
from tests.mcp.conftest import add_server  # noqa: F401 - fixture


def test_experimental_resource_maps_the_mcp_resources(alice, bob, add_server):  # noqa: F811
    assert alice.get("/experimental/resource", params=params(alice)).json() == {}
    add_server(alice)
    r = alice.get("/experimental/resource", params=params(alice))
    assert r.status_code == 200, r.text
    assert r.json() == {"calc:notes": {"name": "notes", "uri": "test://notes", "client": "calc",
                                       "description": "Some notes.", "mimeType": "text/plain"}}
    assert bob.get("/experimental/resource", params=params(bob)).json() == {}
