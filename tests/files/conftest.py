from tests.files.server_inside_root import alice_inside, inside  # noqa: F401 — fixtures of the tests here
