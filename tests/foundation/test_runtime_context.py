"""Which directory a request works in, and which it may not."""
from urllib.parse import quote

from tests.conftest import make_repo


def test_a_directory_outside_the_roots_is_403_with_a_clear_message(alice, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    response = alice.get("/path", params={"directory": str(outside)})
    assert response.status_code == 403
    assert "outside the allowed directories" in response.json()["data"]["message"]
    assert alice.get("/path", params={"directory": "/"}).status_code == 403
    assert alice.get("/path", params={"directory": "/etc"}).status_code == 403


def test_a_sibling_with_the_roots_name_as_prefix_is_403(alice, tmp_path):
    sibling = tmp_path / "alice2"  # alice's root is tmp_path / "alice"
    sibling.mkdir()
    assert alice.get("/path", params={"directory": str(sibling)}).status_code == 403


def test_dot_dot_cannot_climb_out_of_the_root(alice):
    assert alice.get("/path", params={"directory": f"{alice.root}/repo/../../"}).status_code == 403


def test_a_symlink_inside_the_root_pointing_outside_is_403(alice, tmp_path):
    outside = tmp_path / "secret"
    outside.mkdir()
    (alice.root / "link").symlink_to(outside)
    assert alice.get("/path", params={"directory": str(alice.root / "link")}).status_code == 403


def test_another_users_root_is_403(alice, bob):
    assert alice.get("/path", params={"directory": str(bob.root)}).status_code == 403


def test_the_url_encoded_directory_header_is_understood(alice):
    spaced = make_repo(alice.root / "with space")
    response = alice.get("/path", headers={"x-opencode-directory": quote(str(spaced), safe="")})
    assert response.status_code == 200
    assert response.json()["directory"] == str(spaced)


def test_the_query_wins_over_the_header(alice):
    other = alice.root / "other"
    other.mkdir()
    response = alice.get("/path", params={"directory": str(other)},
                         headers={"x-opencode-directory": quote(str(alice.repo), safe="")})
    assert response.json()["directory"] == str(other)


def test_without_a_directory_the_first_root_is_used(alice):
    from auth_app.tokens import roots_add

    second = alice.root.parent / "second-root"
    second.mkdir()
    roots_add(user=alice.user, path=str(second))
    assert alice.get("/path").json()["directory"] == str(alice.root)
    assert alice.get("/path", params={"directory": str(second)}).status_code == 200


def test_a_user_without_roots_is_403(charlie):
    response = charlie.get("/path")
    assert response.status_code == 403
    assert "no allowed directories" in response.json()["data"]["message"]
    assert charlie.get("/config").status_code == 403


def test_a_missing_directory_inside_the_root_is_400(alice):
    response = alice.get("/path", params={"directory": str(alice.root / "nope")})
    assert response.status_code == 400


def test_a_relative_directory_is_400(alice):
    assert alice.get("/path", params={"directory": "repo"}).status_code == 400
