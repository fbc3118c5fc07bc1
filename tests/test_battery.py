"""The battery every route gets for free, generated from the URL conf: anonymous callers are refused,
another user's ids are 404s, malformed bodies are 400s that name the field and change no row and no file,
unknown ids are 404/400 (never 500) that change nothing either, and every operation of the spec has a route."""
import functools
import hashlib
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection

from tests.foundation import objects as persona_objects
from tests.foundation.bodies import malformed_field
from tests.foundation.routes import all_routes, spec_operations

pytestmark = pytest.mark.long_running(seconds=40)  # scheduled before shorter files (tests/conftest.py)

ROUTES = all_routes()
PUBLIC = {"global.health", "health.get"}


def is_public(route) -> bool:
    return route.operation_id in PUBLIC or route.operation_id.startswith("share.") or route.name.startswith("share.")


def send(client, route, url: str | None = None, **kwargs):
    """Send without waiting for a streamed body (SSE routes would never end)."""
    with client.stream(route.method, url or route.url(), **kwargs) as response:
        if "text/event-stream" in response.headers.get("content-type", ""):
            return response.status_code, response.headers, None
        response.read()
        return response.status_code, response.headers, response


def _ids(routes):
    return [f"{r.mount}:{r.method}:{r.path}" for r in routes]


PROTECTED = [r for r in ROUTES if not is_public(r)]
WITH_BODY = [r for r in ROUTES if r.method in ("POST", "PUT", "PATCH") and r.is_drf and not is_public(r)]
WITH_IDS = [r for r in ROUTES if r.params and r.is_drf and not is_public(r)]


@pytest.mark.parametrize("route", PROTECTED, ids=_ids(PROTECTED))
def test_every_route_refuses_anonymous_callers(anon, route):
    status, headers, _ = send(anon, route, json={} if route.method in ("POST", "PUT", "PATCH") else None)
    assert status == 401, route
    assert headers.get("www-authenticate") == 'Basic realm="agentserver"'


@pytest.mark.parametrize("route", PROTECTED, ids=_ids(PROTECTED))
def test_every_route_refuses_a_wrong_token(anon, route):
    status, _, _ = send(anon, route, headers={"Authorization": "Bearer as_wrong"})
    assert status == 401, route


OUR_APPS = ("agentserver", "audit_app", "auth_app", "policy_app", "projects_app", "providers_app", "pty_app",
            "sessions_app", "tui_app", "usage_app", "web_app")


# Authenticating a request notes the token's first use from its address (auth_app/token_use.py, for the
# audit log) and, once a minute, when the token was last used, whatever the request then asks: facts about
# the credential, not changes the request made.
AUTHENTICATION = ("auth_app.TokenAddress", "audit_app.ChainHead")  # the chain's head moves with any record
AUTHENTICATION_FIELDS = {"auth_app.ApiToken": {"last_used"}}
AUTHENTICATION_RECORDS = {"audit_app.AuditRecord": {"action": "token.first_use"}}


@functools.cache
def _row_queries() -> list[tuple[str, str, tuple]]:
    """(label, SQL, parameters) reading every row of each model of ours, compiled once: the battery reads
    them twice a test, some 250 tests a pass, and the ORM built each query anew."""
    queries = []
    for app in OUR_APPS:
        for model in apps.get_app_config(app).get_models():
            label = model._meta.label
            if label in AUTHENTICATION:
                continue
            fields = [f.attname for f in model._meta.concrete_fields
                      if f.attname not in AUTHENTICATION_FIELDS.get(label, ())]
            rows = (model.objects.exclude(**AUTHENTICATION_RECORDS.get(label, {})).order_by("pk")
                    .values_list(*fields))
            queries.append((label, *rows.query.sql_with_params()))
    return queries


def stored_state(*, ignore: tuple[str, ...] = (), files: Path | None = None) -> dict[str, str]:
    """A digest of every row of every model of ours, and of the files under `files`: a refused request
    must leave every row and file as it was (not only as many)."""
    state = {}
    with connection.cursor() as cursor:
        for label, query, params in _row_queries():
            if label not in ignore:
                cursor.execute(query, params)
                state[label] = hashlib.sha256(repr(cursor.fetchall()).encode()).hexdigest()
    if files is not None:
        listing = sorted((str(path.relative_to(files)), path.read_bytes() if path.is_file() else b"")
                         for path in files.rglob("*") if ".git" not in path.relative_to(files).parts[:1])
        state["files"] = hashlib.sha256(repr(listing).encode()).hexdigest()
    return state


# alice's runners may still publish (a title being generated) and renew their leases while the battery asks:
# the event log and the leases are compared where nothing runs (the malformed JSON test), not beside them.
BACKGROUND = ("agentserver.EventLog", "sessions_app.SessionLease")


@pytest.mark.parametrize("route", WITH_BODY, ids=_ids(WITH_BODY))
def test_every_body_route_answers_malformed_json_with_400(alice, route):
    before = stored_state(files=alice.repo)
    status, _, response = send(alice.client, route, content=b'{"nope', params={"directory": str(alice.repo)},
                               headers={"Content-Type": "application/json"})
    assert status == 400, route
    assert response.json()["name"] == "BadRequestError"
    assert stored_state(files=alice.repo) == before


@pytest.mark.parametrize("route", WITH_IDS, ids=_ids(WITH_IDS))
def test_every_route_answers_an_unknown_id_with_404_or_400(alice, route):
    kwargs = {"json": {}} if route.method in ("POST", "PUT", "PATCH") else {}
    before = stored_state(files=alice.repo)
    status, _, response = send(alice.client, route, params={"directory": str(alice.repo)}, **kwargs)
    assert status in (400, 404), (route, status, response and response.text)
    assert response.json()["name"] in ("NotFoundError", "BadRequestError")
    assert stored_state(files=alice.repo) == before


def test_every_drf_route_declares_its_operation_ids():
    from django.urls import URLPattern, URLResolver, get_resolver

    missing = []

    def walk(patterns, prefix=""):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                if not str(entry.pattern).startswith("admin/"):
                    walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern) and hasattr(entry.callback, "cls"):
                if not getattr(entry.callback.cls, "operation_ids", None) or not entry.name:
                    missing.append(prefix + str(entry.pattern))

    walk(get_resolver().url_patterns)
    assert not missing


def test_every_operation_of_the_spec_has_a_route():
    routed = {(r.mount, r.method, r.path, r.operation_id) for r in ROUTES}
    missing = [op for op in spec_operations() if op not in routed]
    assert not missing, "missing routes:\n" + "\n".join(f"{m} {meth} {p} ({o})" for m, meth, p, o in missing)


def test_the_spec_tables_were_read():
    operations = spec_operations()
    assert len([o for o in operations if o[0] == "original"]) >= 40
    assert len([o for o in operations if o[0] == "v2"]) >= 60


# ---- another user's objects ----------------------------------------------------------------------------
# alice owns one object of every kind a path can name (tests/foundation/objects.py); bob asks for each.

# Bodies that pass validation, for routes that check their input before looking the object up: bob's 404
# must come from the lookup, not from a missing field.
VALID_BODIES = {
    "permission.reply": {"reply": "once"},
    "permission.respond": {"response": "once"},
    "question.reply": {"answers": [["red"]]},
    "mcp.server.oauth.callback": {"code": "a-code"},
    "mcp.auth.callback": {"code": "a-code"},
    "provider.oauth.authorize": {"method": 0},
    "provider.oauth.callback": {"method": 0, "code": "a-code"},
    "session.permission.create": {"action": "read", "resources": ["README.md"]},
    "session.permission.reply": {"reply": "once"},
    "session.question.reply": {"answers": [["red"]]},
    "session.switchAgent": {"agent": "build"},
    "session.switchModel": {"model": {"id": "fake-model", "providerID": "fake"}},
    "session.revert.stage": {"messageID": "msg_0000000000000000000000000a"},
    "credential.update": {"label": "bob's"},
    "v2.projectCopy.create": {"strategy": "worktree", "directory": "/tmp/bobs-copy"},
    "v2.projectCopy.remove": {"directory": "/tmp/bobs-copy", "force": True},
}
# Answers other than 404 that the spec gives everyone alike, with the reason.
# (A provider without OAuth sign-in is a 404 for every caller, bob included, so it needs no entry here.)
OTHER_ANSWERS: dict[str, tuple[int, str]] = {}
# Routes whose path names something no persona owns, each with the reason. A new route whose parameter the
# objects module cannot fill fails the battery until it is filled there or listed here.
UNFILLABLE: dict[str, str] = {
    "auth.set": "a provider id names no one's object: each caller sets and removes only their own key "
                "(tests/accounts/test_provider_auth_routes.py checks bob against alice's key)",
    "auth.remove": "as auth.set",
    "integration.get": "an integration id is a provider of the catalog, the same for everyone; each caller connects "
                       "only their own credentials (tests/clients/test_js_sdk_v2.py checks bob's connections)",
    "integration.connect.key": "as integration.get",
    "integration.connect.oauth": "as integration.get",
}


def route_values(objects, route) -> dict[str, str]:
    values = {param: objects.value(route, param) for param in route.params}
    missing = [param for param, value in values.items() if value is None]
    assert not missing or route.operation_id in UNFILLABLE, (
        f"{route}: no object of alice's for {missing}; add one to tests/foundation/objects.py or list the "
        f"route in UNFILLABLE with the reason")
    return values


def test_every_route_answers_404_to_another_user_naming_alices_objects(alice, bob, fake_llm):
    objects = persona_objects.build(alice, fake_llm)
    try:
        wrong = []
        for route in WITH_IDS:
            if route.operation_id in UNFILLABLE:
                continue
            body = VALID_BODIES.get(route.operation_id, {})
            status, response = ask(bob.client, route, route_values(objects, route), body, bob.repo)
            expected = OTHER_ANSWERS.get(route.operation_id, (404,))[0]
            answer = response.json() if response is not None and response.content else None
            name = answer.get("name") if isinstance(answer, dict) else None
            if status != expected or (status == 404 and name != "NotFoundError"):
                wrong.append(f"{route}: {status} {response.text[:200] if response is not None else '(stream)'}")
        assert not wrong, "bob reached alice's objects:\n" + "\n".join(wrong)
        persona_objects.assert_intact(alice, objects)
    finally:
        persona_objects.tear_down(alice, objects)


LISTS = [r for r in ROUTES if r.method == "GET" and not r.params and not is_public(r)]


def test_no_list_route_shows_another_user_alices_objects(alice, bob, fake_llm):
    """Every GET route without ids, asked by bob in his directory and in alice's: never a 5xx, never one of
    alice's ids in the body (alice's directory is refused or ignored). Event streams are left to the
    events tests: their bodies never end."""
    objects = persona_objects.build(alice, fake_llm)
    try:
        wrong = []
        for route in LISTS:
            for directory in (bob.repo, alice.repo):
                status, headers, response = send(bob.client, route, params={"directory": str(directory)})
                shown = [] if response is None else [name for name, value in objects.private_ids().items()
                                                      if value in response.text]
                if status >= 500 or shown:
                    wrong.append(f"{route} in {directory}: {status}, shows alice's {shown}")
        assert not wrong, "\n".join(wrong)
    finally:
        persona_objects.tear_down(alice, objects)


# ---- malformed fields ----------------------------------------------------------------------------------
# Each body route gets one field of the wrong type (read from the serializer its view parses with,
# tests/foundation/bodies.py), on alice's own objects so the object exists and only the field is wrong.

# Routes that take no body fields, or whose body is not a serializer's; each says why or gives its own
# malformed body. A new body route that is in neither place fails the battery.
NO_BODY_FIELDS = {
    "auth.activate": "the account id is the whole input",
    "workspace.sync": "no input",
    "question.reject": "the request id is the whole input",
    "session.wait": "the session id is the whole input",
    "session.compact": "the session id is the whole input",
    "mcp.server.oauth.start": "the server name is the whole input",
    "instance.dispose": "no input",
    "session.share": "the session id is the whole input",
    "session.abort": "the session id is the whole input",
    "session.unrevert": "the session id is the whole input",
    "mcp.auth.start": "the server name is the whole input",
    "session.interrupt": "the session id is the whole input",
    "project.initGit": "the directory is the whole input",
    "global.dispose": "no input",
    "tui.openHelp": "no input",
    "tui.openSessions": "no input",
    "tui.openThemes": "no input",
    "tui.openModels": "no input",
    "tui.submitPrompt": "no input",
    "tui.clearPrompt": "no input",
    "tui.control.response": "any JSON value is the TUI's answer",
    "mcp.auth.authenticate": "the server name is the whole input",
    "mcp.connect": "the server name is the whole input",
    "mcp.disconnect": "the server name is the whole input",
    "pty.connectToken": "the terminal id is the whole input",
    "session.revert.clear": "the session id is the whole input",
    "session.revert.commit": "the session id is the whole input",
    "session.question.reject": "the session and request ids are the whole input",
    "experimental.session.background": "the session id is the whole input",
    "experimental.workspace.syncList": "no input",
    "v2.projectCopy.refresh": "the project id is the whole input",
    "sync.start": "no input",
}
OWN_MALFORMED_BODIES = {
    "config.update": ("model", {"model": 42}),  # a Config, validated by the config schema
    "global.config.update": ("model", {"model": 42}),  # as config.update
    # Both spellings are accepted (the spec's `response`, 1.18's `reply`/`answers`), so no one serializer.
    "permission.reply": ("reply", {"reply": 42}),
    "question.reply": ("answers", {"answers": 42}),
    "auth.set": ("type", {"type": 42, "key": "k"}),  # an Auth record, as opencode's body
    "part.update": ("type", {"type": 42}),  # a whole Part
    # A map of session id → last known sequence number, no fixed fields.
    "sync.history.list": ("ses_known", {"ses_known": "late"}),
}


def test_every_body_route_refuses_a_wrongly_typed_field_by_name_and_stores_nothing(alice, fake_llm):
    objects = persona_objects.build(alice, fake_llm)
    try:
        wrong = []
        for route in WITH_BODY:
            if route.operation_id in NO_BODY_FIELDS:
                continue
            if route.operation_id in OWN_MALFORMED_BODIES:
                field, body = OWN_MALFORMED_BODIES[route.operation_id]
            else:
                found = malformed_field(route)
                assert found, (f"{route}: no serializer found for its body; list it in NO_BODY_FIELDS or "
                               f"OWN_MALFORMED_BODIES")
                field, value = found
                body = {field: value}
            before = stored_state(ignore=BACKGROUND, files=alice.repo)
            status, response = ask(alice.client, route, route_values(objects, route), body, alice.repo)
            data = response.json().get("data", {}) if response is not None else {}
            named = [issue for issue in data.get("issues") or [] if issue.get("path", [None])[0] == field]
            if status != 400 or not named or field not in data.get("message", ""):
                wrong.append(f"{route} with {body}: {status} {data}")
            elif (after := stored_state(ignore=BACKGROUND, files=alice.repo)) != before:
                changed = sorted(label for label in before if before[label] != after.get(label))
                wrong.append(f"{route} with {body}: changed {changed}")
        assert not wrong, "\n".join(wrong)
        persona_objects.assert_intact(alice, objects)
    finally:
        persona_objects.tear_down(alice, objects)


def ask(client, route, values: dict, body: dict, directory):
    """(status, response); the response is None for an event stream, which is never read. A DELETE sends a body
    only when given one (v2.projectCopy.remove names its copy in the body)."""
    kwargs = {"json": body} if route.method in ("POST", "PUT", "PATCH") or body else {}
    status, _, response = send(client, route, url=route.url(values), params={"directory": str(directory)},
                               **kwargs)
    return status, response
