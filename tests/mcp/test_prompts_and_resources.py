"""mcp.prompt.list / render and mcp.resource.list / read through the real client."""
from tests.mcp.conftest import api


def test_prompts_are_listed_and_rendered(alice, add_server):
    add_server(alice)
    prompts = api(alice, "GET", "/mcp/prompt").json()
    assert prompts == [{"name": "greet", "client": "calc", "server": "calc", "description": "Greet someone by name.",
                        "arguments": [{"name": "name", "required": True}]}]
    rendered = api(alice, "POST", "/mcp/prompt/render",
                   json={"server": "calc", "name": "greet", "arguments": {"name": "Bob"}}).json()
    assert rendered["text"] == "Please greet Bob warmly."
    assert rendered["messages"] == [{"role": "user", "content": {"type": "text", "text": "Please greet Bob warmly."}}]


def test_resources_are_listed_and_read(alice, add_server):
    add_server(alice)
    resources = api(alice, "GET", "/mcp/resource").json()
    assert resources == [{"name": "notes", "uri": "test://notes", "client": "calc", "description": "Some notes.",
                          "mimeType": "text/plain"}]
    read = api(alice, "GET", "/mcp/resource/read", params={"server": "calc", "uri": "test://notes"}).json()
    assert read["contents"][0]["text"] == "the notes text" and read["contents"][0]["uri"] == "test://notes"


def test_unknown_servers_prompts_and_bad_input(alice, add_server):
    add_server(alice)
    missing = api(alice, "POST", "/mcp/prompt/render", json={"server": "nope", "name": "greet"})
    assert missing.status_code == 404 and missing.json()["name"] == "NotFoundError"
    unknown_prompt = api(alice, "POST", "/mcp/prompt/render", json={"server": "calc", "name": "nope"})
    assert unknown_prompt.status_code == 409  # the server refused it: the request itself was well formed
    assert api(alice, "POST", "/mcp/prompt/render", json={"server": "calc"}).status_code == 400
    assert api(alice, "POST", "/mcp/prompt/render",
               json={"server": "calc", "name": "greet", "arguments": {"name": 5}}).status_code == 400
    assert api(alice, "GET", "/mcp/resource/read", params={"server": "calc"}).status_code == 400
    assert api(alice, "GET", "/mcp/resource/read", params={"server": "nope", "uri": "x"}).status_code == 404


def test_lists_are_empty_without_servers(alice):
    assert api(alice, "GET", "/mcp/prompt").json() == []
    assert api(alice, "GET", "/mcp/resource").json() == []
