def test_health_answers_anonymously(anon):
    response = anon.get("/global/health")
    assert response.status_code == 200
    assert response.json()["healthy"] is True
    assert isinstance(response.json()["version"], str)


def test_bearer_token_is_accepted(alice):
    assert alice.get("/doc").status_code == 200


def test_any_accept_header_gets_json_as_opencode_answers(alice):
    for accept in ("text/html", "text/plain", "image/png", "*/*", "application/json"):
        response = alice.get("/session", headers={"Accept": accept})
        assert response.status_code == 200, accept
        assert response.headers["content-type"].startswith("application/json")
        assert isinstance(response.json(), list)
