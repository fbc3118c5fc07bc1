"""A live server whose data dir lies inside alice's root, as a checkout's default `.data` does under a root of
`$HOME` or `$HOME/src`: <home>/agentserver/data, beside her repository <home>/repo. The data dir holds a
planted `secret_key` and `db.sqlite3` (the server itself takes its key from SECRET_KEY and its database from
the test database, as every test server does)."""
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from tests.conftest import LiveServer, make_persona, make_repo, start_server

PLANTED_KEY = "planted-secret-key-NEEDLE-7f3a"
PLANTED_DB = "SQLite format 3\x00 planted NEEDLE-7f3a"


@dataclass
class Inside:
    live: LiveServer
    home: Path  # alice's root
    data: Path  # the server's data dir, inside it


@pytest.fixture(scope="module")
def inside(django_db_setup, tmp_path_factory) -> Inside:
    home = tmp_path_factory.mktemp("home").resolve()
    data = home / "agentserver" / "data"
    data.mkdir(parents=True)
    (data / "secret_key").write_text(PLANTED_KEY)
    (data / "db.sqlite3").write_text(PLANTED_DB)
    make_repo(home / "repo", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})
    live = start_server({"AGENTSERVER_DATA_DIR": str(data), "SECRET_KEY": settings.SECRET_KEY},
                        log_dir=tmp_path_factory.mktemp("inside-log"))
    yield Inside(live=live, home=home, data=data)
    live.stop()


@pytest.fixture
def alice_inside(inside, transactional_db):
    """alice, her root the directory that holds the server's data dir (her repository: <root>/repo)."""
    from auth_app.tokens import roots_add

    persona = make_persona("alice", inside.live.url, None)
    roots_add(user=persona.user, path=str(inside.home))
    persona.root = inside.home
    yield persona
    persona.client.close()
