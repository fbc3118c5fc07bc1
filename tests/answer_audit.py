"""Every JSON answer a test's persona receives is checked against what /doc says that route answers.

`checker(base_url, token)` is the personas' httpx response hook (tests/conftest.py make_persona): it finds the
request's route in /doc (fetched once per test process, from the first server asked: the document depends only
on the code, server/api/doc.py, and every server of a run serves this checkout), and validates a 2xx JSON body
against the schema /doc states for that status. A body outside it fails the request, so every test of the suite
is also a test that /doc tells the truth about what it received."""
from __future__ import annotations

import json
import re
import threading

import httpx
import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012


class AnswerOutsideDoc(AssertionError):
    pass


class _Document:
    def __init__(self, base_url: str, token: str):
        document = httpx.get(f"{base_url}/doc", headers={"Authorization": f"Bearer {token}"}, timeout=60).json()
        self.registry = referencing.Registry().with_resource("urn:doc", DRAFT202012.create_resource(document))
        self.routes = []  # (method, regex, template, {status: JSON pointer of its schema})
        for template, methods in document["paths"].items():
            pattern = re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template)) + "$")
            escaped = template.replace("~", "~0").replace("/", "~1")
            for method, operation in methods.items():
                pointers = {status: f"urn:doc#/paths/{escaped}/{method}/responses/{status}/content/application~1json/schema"
                            for status, response in operation.get("responses", {}).items()
                            if status.startswith("2") and "application/json" in response.get("content", {})}
                self.routes.append((method.upper(), pattern, template, pointers))
        self.routes.sort(key=lambda route: route[2].count("{"))  # /session/status before /session/{sessionID}
        self.validators: dict[str, jsonschema.Draft202012Validator] = {}

    def validator(self, pointer: str) -> jsonschema.Draft202012Validator:
        if pointer not in self.validators:
            self.validators[pointer] = jsonschema.Draft202012Validator({"$ref": pointer}, registry=self.registry)
        return self.validators[pointer]

    def route(self, method: str, path: str):
        return next(((template, pointers) for m, pattern, template, pointers in self.routes
                     if m == method and pattern.match(path)), (None, {}))


_the_document: _Document | None = None
_lock = threading.Lock()


def _document(base_url: str, token: str) -> _Document:
    # One document for every server: a fresh server builds /doc in about a second of CPU, and the validators
    # compiled from it would be compiled again for each of the run's hundred-odd servers.
    global _the_document
    with _lock:
        if _the_document is None:
            _the_document = _Document(base_url, token)
        return _the_document


def checker(base_url: str, token: str):
    def check(response: httpx.Response) -> None:
        request = response.request
        if not (200 <= response.status_code < 300) or request.url.path == "/doc" \
                or not response.headers.get("content-type", "").startswith("application/json"):
            return
        document = _document(base_url, token)
        template, pointers = document.route(request.method, request.url.path)
        pointer = pointers.get(str(response.status_code))
        if pointer is None:
            return
        response.read()
        try:
            body = json.loads(response.content)
        except ValueError:
            raise AnswerOutsideDoc(f"{request.method} {template} answered {response.status_code} with a body "
                                   "that is not JSON") from None
        error = jsonschema.exceptions.best_match(document.validator(pointer).iter_errors(body))
        if error is not None:
            while error.context:  # anyOf / oneOf: the branch that came closest says what is wrong
                error = jsonschema.exceptions.best_match(error.context)
            where = "/".join(map(str, error.absolute_path)) or "(the body)"
            raise AnswerOutsideDoc(f"{request.method} {template} answered {response.status_code} outside what /doc "
                                   f"states: at {where}: {error.message[:600]}")
    return check
