def test_health_answers_anonymously(anon):
    response = anon.get("/global/health")
    assert response.status_code == 200
    assert response.json()["healthy"] is True
    assert isinstance(response.json()["version"], str)


def test_bearer_token_is_accepted(alice):
    assert alice.get("/doc").status_code == 200
