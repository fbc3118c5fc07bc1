"""vcs.status / file.status polled by many clients at once: calls share git runs, yet every answer comes
from a run that started after the call, each user gets their own worktree's answer, and nothing fails."""
import threading

import httpx

from tests.files.helpers import params


def _poll(persona, route, stop: threading.Event, failures: list) -> None:
    with httpx.Client(base_url=persona.base_url, headers={"Authorization": f"Bearer {persona.token}"},
                      timeout=30) as client:
        while not stop.is_set():
            response = client.get(route, params=params(persona))
            if response.status_code != 200:
                failures.append(response.text)


def test_a_change_made_before_asking_is_in_the_answer_while_others_poll(alice):
    stop, failures = threading.Event(), []
    pollers = [threading.Thread(target=_poll, args=(alice, route, stop, failures))
               for route in ("/file/status", "/file/status", "/api/vcs/status", "/vcs/status")]
    for poller in pollers:
        poller.start()
    try:
        for number in range(12):
            (alice.repo / f"new{number}.txt").write_text("one\ntwo\n")
            answer = alice.get("/file/status", params=params(alice))
            assert answer.status_code == 200, answer.text
            paths = {change["path"]: change for change in answer.json()}
            assert set(paths) == {f"new{n}.txt" for n in range(number + 1)}
            assert paths[f"new{number}.txt"] == {"path": f"new{number}.txt", "added": 2, "removed": 0,
                                                 "status": "added"}
    finally:
        stop.set()
        for poller in pollers:
            poller.join()
    assert failures == []


def test_users_polling_at_once_each_get_their_own_worktree(alice, bob):
    (alice.repo / "alice.txt").write_text("a\n")
    (bob.repo / "bob.txt").write_text("b\n")
    answers: dict[str, list] = {"alice": [], "bob": []}

    def ask(name, persona):
        for _ in range(8):
            answers[name].append(sorted(c["path"] for c in persona.get("/file/status", params=params(persona)).json()))

    threads = [threading.Thread(target=ask, args=pair) for pair in (("alice", alice), ("bob", bob)) * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers["alice"] == [["alice.txt"]] * 16
    assert answers["bob"] == [["bob.txt"]] * 16
