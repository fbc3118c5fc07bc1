"""Validation of a config body (PATCH /config): the known keys must have the right types (reference §3.11);
unknown top-level keys pass through. Returns issues `[{"path": [...], "message": ...}]`, empty when valid."""
from __future__ import annotations

import re

from agentserver.http.api import json_integer

ACTIONS = ("ask", "allow", "deny")
MODEL_REF = re.compile(r"^[^/\s]+/\S.*$")
Issues = list[dict]


def _type_name(value) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__)


def _issue(issues: Issues, path: list, message: str) -> None:
    issues.append({"path": list(path), "message": message})


def _expect(issues: Issues, path: list, value, expected: str) -> None:
    _issue(issues, path, f"Expected {expected}, got {_type_name(value)}")


def _string(issues, path, value, *, nullable=False):
    if not (isinstance(value, str) or (nullable and value is None)):
        _expect(issues, path, value, "string | null" if nullable else "string")


def _boolean(issues, path, value):
    if not isinstance(value, bool):
        _expect(issues, path, value, "boolean")


def _number(issues, path, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _expect(issues, path, value, "number")


def _integer(issues, path, value):
    if json_integer(value) is None or value < 0:
        _expect(issues, path, value, "non-negative integer")


def _object(issues, path, value) -> bool:
    if not isinstance(value, dict):
        _expect(issues, path, value, "object")
        return False
    return True


def _string_list(issues, path, value):
    if not isinstance(value, list):
        _expect(issues, path, value, "array of strings")
        return
    for index, item in enumerate(value):
        _string(issues, path + [index], item)


def _string_map(issues, path, value):
    if _object(issues, path, value):
        for key, item in value.items():
            _string(issues, path + [key], item)


def _model_ref(issues, path, value, *, nullable=True):
    if value is None and nullable:
        return
    if not isinstance(value, str):
        _expect(issues, path, value, "string | null")
    elif not MODEL_REF.match(value):
        _issue(issues, path, f'Expected "provider/model", got {value!r}')


def _enum(issues, path, value, choices):
    if value not in choices:
        _issue(issues, path, f"Expected one of {', '.join(choices)}, got {value!r}")


def _permission_value(issues, path, value):
    """An action, or a map pattern → action."""
    if isinstance(value, str):
        _enum(issues, path, value, ACTIONS)
    elif isinstance(value, dict):
        for pattern, action in value.items():
            _enum(issues, path + [pattern], action, ACTIONS)
    else:
        _expect(issues, path, value, "ask | allow | deny | object")


def _permission(issues, path, value):
    """A single action for everything, or permission → action | {pattern → action}."""
    if isinstance(value, str):
        _enum(issues, path, value, ACTIONS)
    elif isinstance(value, dict):
        for key, item in value.items():
            _permission_value(issues, path + [key], item)
    else:
        _expect(issues, path, value, "ask | allow | deny | object")


def _bool_map(issues, path, value):
    if _object(issues, path, value):
        for key, item in value.items():
            _boolean(issues, path + [key], item)


def _agent(issues, path, value):
    if not _object(issues, path, value):
        return
    checks = {
        "model": lambda p, v: _model_ref(issues, p, v),
        "temperature": lambda p, v: _number(issues, p, v),
        "top_p": lambda p, v: _number(issues, p, v),
        "prompt": lambda p, v: _string(issues, p, v),
        "tools": lambda p, v: _bool_map(issues, p, v),
        "disable": lambda p, v: _boolean(issues, p, v),
        "description": lambda p, v: _string(issues, p, v),
        "mode": lambda p, v: _enum(issues, p, v, ("subagent", "primary", "all")),
        "color": lambda p, v: _string(issues, p, v),
        "maxSteps": lambda p, v: _integer(issues, p, v),
        "steps": lambda p, v: _integer(issues, p, v),
        "permission": lambda p, v: _permission(issues, p, v),
        "hidden": lambda p, v: _boolean(issues, p, v),
        "options": lambda p, v: _object(issues, p, v),
        "variant": lambda p, v: _string(issues, p, v),
    }
    _fields(path, value, checks)


def _fields(path, value: dict, checks: dict):
    for key, check in checks.items():
        if key in value:
            check(path + [key], value[key])


def _map_of(issues, path, value, item_check):
    if _object(issues, path, value):
        for key, item in value.items():
            item_check(issues, path + [key], item)


def _command(issues, path, value):
    if not _object(issues, path, value):
        return
    if "template" not in value:
        _issue(issues, path + ["template"], "Required")
    _fields(path, value, {
        "template": lambda p, v: _string(issues, p, v),
        "description": lambda p, v: _string(issues, p, v),
        "agent": lambda p, v: _string(issues, p, v),
        "model": lambda p, v: _model_ref(issues, p, v),
        "subtask": lambda p, v: _boolean(issues, p, v),
    })


def _provider(issues, path, value):
    if not _object(issues, path, value):
        return
    _fields(path, value, {
        "api": lambda p, v: _string(issues, p, v),
        "name": lambda p, v: _string(issues, p, v),
        "id": lambda p, v: _string(issues, p, v),
        "npm": lambda p, v: _string(issues, p, v),
        "env": lambda p, v: _string_list(issues, p, v),
        "models": lambda p, v: _map_of(issues, p, v, lambda i, pp, vv: _object(i, pp, vv)),
        "whitelist": lambda p, v: _string_list(issues, p, v),
        "blacklist": lambda p, v: _string_list(issues, p, v),
        "options": lambda p, v: _object(issues, p, v),
    })


def _mcp(issues, path, value):
    if not _object(issues, path, value):
        return
    kind = value.get("type")
    if kind == "local":
        if "command" not in value:
            _issue(issues, path + ["command"], "Required")
        _fields(path, value, {
            "command": lambda p, v: _string_list(issues, p, v),
            "environment": lambda p, v: _string_map(issues, p, v),
        })
    elif kind == "remote":
        if "url" not in value:
            _issue(issues, path + ["url"], "Required")
        _fields(path, value, {
            "url": lambda p, v: _string(issues, p, v),
            "headers": lambda p, v: _string_map(issues, p, v),
        })
    else:
        _enum(issues, path + ["type"], kind, ("local", "remote"))
    _fields(path, value, {
        "enabled": lambda p, v: _boolean(issues, p, v),
        "timeout": lambda p, v: _integer(issues, p, v),
    })


def validate_config(body) -> Issues:
    issues: Issues = []
    if not isinstance(body, dict):
        _expect(issues, [], body, "object")
        return issues
    nullable_string = lambda p, v: _string(issues, p, v, nullable=True)  # noqa: E731
    checks = {
        "$schema": nullable_string,
        "model": lambda p, v: _model_ref(issues, p, v),
        "small_model": lambda p, v: _model_ref(issues, p, v),
        "default_agent": nullable_string,
        "username": nullable_string,
        "theme": nullable_string,
        "logLevel": nullable_string,
        "provider": lambda p, v: _map_of(issues, p, v, _provider),
        "agent": lambda p, v: _map_of(issues, p, v, _agent),
        "mode": lambda p, v: _map_of(issues, p, v, _agent),
        "command": lambda p, v: _map_of(issues, p, v, _command),
        "permission": lambda p, v: _permission(issues, p, v),
        "tools": lambda p, v: _bool_map(issues, p, v),
        "mcp": lambda p, v: _map_of(issues, p, v, _mcp),
        "instructions": lambda p, v: _string_list(issues, p, v),
        "plugin": lambda p, v: _string_list(issues, p, v),
        "disabled_providers": lambda p, v: _string_list(issues, p, v),
        "enabled_providers": lambda p, v: _string_list(issues, p, v),
        "share": lambda p, v: _enum(issues, p, v, ("manual", "auto", "disabled")),
        "autoshare": lambda p, v: _boolean(issues, p, v),
        "snapshot": lambda p, v: _boolean(issues, p, v),
        "autoupdate": lambda p, v: v in (True, False, "notify") or _expect(issues, p, v, 'boolean | "notify"'),
    }
    for key in ("keybinds", "tui", "watcher", "layout", "enterprise", "experimental", "compaction", "server"):
        checks[key] = lambda p, v: _object(issues, p, v)
    for key in ("formatter", "lsp"):
        checks[key] = lambda p, v: v is False or _object(issues, p, v)
    # A top-level null removes the key from the overrides (merge-patch), so it is always valid.
    _fields([], {key: value for key, value in body.items() if value is not None}, checks)
    return issues
