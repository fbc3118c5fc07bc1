"""Every operation of opencode's SDK v2 client (`@opencode-ai/sdk` 1.19.3: the 188 operations of opencode
1.18.33's OpenAPI document, the same method + path pairs) resolves to a route of ours that serves its method:
none falls through to the front door (`No route`). What each answers is tests/clients/test_js_sdk_v2.py's."""
import re

import pytest
from django.urls import resolve

from tests.foundation.routes import opencode_operations

SAMPLES = {"sessionID": "ses_1", "messageID": "msg_1", "partID": "prt_1", "ptyID": "pty_1", "requestID": "per_1",
           "permissionID": "per_1", "projectID": "0" * 40, "id": "wrk_1"}
OPERATIONS = opencode_operations()


def sample_url(path: str) -> str:
    url = re.sub(r"{(\w+)}", lambda match: SAMPLES.get(match.group(1), "sample"), path)
    return url.replace("*", "notes/hello.txt")


def served_methods(match) -> set[str]:
    view = getattr(match.func, "cls", None) or getattr(match.func, "view_class", None)
    operation_ids = getattr(view, "operation_ids", None) or getattr(match.func, "operation_ids", None)
    return {method.upper() for method in (operation_ids or {"GET": match.url_name})}


def test_the_sdk_has_188_operations():
    assert len(OPERATIONS) == 188


@pytest.mark.parametrize("operation", OPERATIONS, ids=[f"{op[1]} {op[2]}" for op in OPERATIONS])
def test_every_sdk_v2_operation_has_a_route_that_serves_its_method(operation):
    mount, method, path, operation_id = operation
    match = resolve(sample_url(path))
    assert match.url_name is not None, f"No route: {method} {path} ({operation_id})"
    assert method in served_methods(match), f"{method} {path} ({operation_id}) resolves to {match.url_name}, " \
                                            f"which serves {sorted(served_methods(match))}"
    assert match.namespace == ("v2" if mount == "v2" else ""), (operation, match.namespace)
