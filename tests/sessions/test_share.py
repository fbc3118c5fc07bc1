import json

from tests.sessions.helpers import add_message, create_session


def test_a_shared_session_is_readable_anonymously_only_through_its_url(alice, anon):
    session = create_session(alice, title="Shared chat")
    add_message(session["id"], texts=("please explain the parser",))
    response = alice.post(f"/session/{session['id']}/share")
    assert response.status_code == 200
    shared = response.json()
    url = shared["share"]["url"]
    assert url.startswith(alice.base_url + "/share/")
    slug = url.rsplit("/", 1)[1]
    assert len(slug) >= 20
    assert alice.get(f"/session/{session['id']}").json()["share"] == {"url": url}

    page = anon.get(url)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "Shared chat" in page.text and "please explain the parser" in page.text
    data = anon.get(url + "/data")
    assert data.status_code == 200
    assert data.json()["session"]["title"] == "Shared chat"
    assert data.json()["messages"][0]["parts"][0]["text"] == "please explain the parser"
    assert anon.get(url, params={"format": "json"}).json() == data.json()
    assert "directory" not in json.dumps(data.json()["session"])
    assert str(alice.root) not in data.text

    # guessing does not work: the session id, a wrong slug
    assert anon.get(f"/share/{session['id']}").status_code == 404
    assert anon.get("/share/not-a-real-share").status_code == 404
    assert anon.get("/share/not-a-real-share/data").status_code == 404


def test_sharing_twice_keeps_the_url_and_unshare_makes_it_404_at_once(alice, anon):
    session = create_session(alice)
    url = alice.post(f"/session/{session['id']}/share").json()["share"]["url"]
    assert alice.post(f"/session/{session['id']}/share").json()["share"]["url"] == url
    response = alice.delete(f"/session/{session['id']}/share")
    assert response.status_code == 200
    assert "share" not in response.json()
    assert anon.get(url).status_code == 404
    assert anon.get(url + "/data").status_code == 404
    # unshare of an unshared session is fine; a new share gets a new URL
    assert alice.delete(f"/session/{session['id']}/share").status_code == 200
    assert alice.post(f"/session/{session['id']}/share").json()["share"]["url"] != url


def test_the_share_page_redacts_secrets(alice, anon):
    session = create_session(alice)
    secrets = ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
               "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AKIAIOSFODNN7EXAMPLE"]
    add_message(session["id"], texts=(
        f"my key is {secrets[0]} and {secrets[1]}",
        "curl -H 'Authorization: Bearer abcdefghijklmnop12345' https://api.example.com",
        f"export AWS_ACCESS_KEY_ID={secrets[2]}\nexport DB_PASSWORD=hunter2hunter2",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    ))
    url = alice.post(f"/session/{session['id']}/share").json()["share"]["url"]
    for body in (anon.get(url).text, anon.get(url + "/data").text):
        for secret in [*secrets, "abcdefghijklmnop12345", "hunter2hunter2", "b3BlbnNzaC1rZXktdjEAAAAA"]:
            assert secret not in body
        assert "[REDACTED]" in body
    # the owner still sees the originals through the authenticated API
    assert secrets[0] in alice.get(f"/session/{session['id']}/message").text


def test_config_share_disabled_refuses_to_share(alice, anon):
    (alice.repo / "opencode.json").write_text('{"share": "disabled"}')
    session = create_session(alice)
    response = alice.post(f"/session/{session['id']}/share")
    assert 400 <= response.status_code < 500
    assert "disabled" in response.json()["data"]["message"]
    assert "share" not in alice.get(f"/session/{session['id']}").json()


def test_bob_cannot_share_or_unshare_alices_session(alice, bob, anon):
    session = create_session(alice)
    assert bob.post(f"/session/{session['id']}/share").status_code == 404
    url = alice.post(f"/session/{session['id']}/share").json()["share"]["url"]
    assert bob.delete(f"/session/{session['id']}/share").status_code == 404
    assert anon.get(url).status_code == 200


def test_config_share_auto_shares_new_root_sessions(alice, anon):
    (alice.repo / "opencode.json").write_text('{"share": "auto"}')
    session = create_session(alice)
    assert anon.get(session["share"]["url"]).status_code == 200
    child = create_session(alice, parentID=session["id"])
    assert "share" not in child


def test_listings_show_shares_on_every_path(alice, bob):
    """The plain listing (SQL with the shares joined) and the filtered one (ORM) agree."""
    shared = create_session(alice, title="listed share")
    plain = create_session(alice, title="listed plain")
    url = alice.post(f"/session/{shared['id']}/share").json()["share"]["url"]
    where = {"directory": str(alice.repo)}
    listings = [alice.get("/session", params=where).json(),
                alice.get("/session", params={**where, "roots": "true"}).json(),
                alice.get("/session", params={**where, "search": "listed"}).json()]
    for listing in listings:
        by_id = {item["id"]: item for item in listing}
        assert by_id[shared["id"]]["share"] == {"url": url}
        assert "share" not in by_id[plain["id"]]
    assert bob.get("/session", params=where).status_code == 403


def test_the_share_setting_comes_from_the_last_layer_that_sets_it(alice, anon):
    from tests.foundation.test_config import set_user_config

    where = {"directory": str(alice.repo)}
    set_user_config(alice, {"share": "auto"})
    assert "share" in create_session(alice)
    (alice.repo / "opencode.json").write_text('{"share": "manual"}')
    assert "share" not in create_session(alice)
    assert alice.patch("/config", params=where, json={"share": "auto"}).status_code == 200
    assert anon.get(create_session(alice)["share"]["url"]).status_code == 200
