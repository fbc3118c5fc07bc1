"""The MCP server config union, checked strictly. Two spellings are accepted and normalized to one:
the config file's (`command: [cmd, ...args]`) and the v2 spec's (`command: cmd, arguments: [...]`)."""
from __future__ import annotations

import re

from agentserver.errors import BadRequest
from agentserver.http.api import WHITESPACE, json_integer

LOCAL_KEYS = {"type", "command", "arguments", "environment", "enabled", "timeout", "cwd"}
REMOTE_KEYS = {"type", "url", "headers", "oauth", "enabled", "timeout"}
OAUTH_KEYS = {"clientId", "clientSecret", "scope", "callbackPort", "redirectUri"}
# 1-128 characters, no control characters or slashes, no space at either end.
NAME_PATTERN = rf"^[^\x00-\x1f/\\{WHITESPACE}](?:[^\x00-\x1f/\\]{{0,126}}[^\x00-\x1f/\\{WHITESPACE}])?$"
NAME_RE = re.compile(NAME_PATTERN)
URL_PATTERN = rf"^https?://[^{WHITESPACE}/]"
MAX_TIMEOUT_MS = 600_000


def _bad(path: list, message: str) -> BadRequest:
    where = ".".join(str(p) for p in path)
    return BadRequest(f"{where}: {message}", issues=[{"path": path, "message": message}])


def check_name(name, path: list | None = None) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise _bad(path or ["name"], "must be 1-128 characters without slashes or control characters")
    return name


def _string_map(value, path: list) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _bad(path, "must map strings to strings")
    return dict(value)


def _string_list(value, path: list) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(path, "must be a list of strings")
    return list(value)


def _common(value: dict, path: list) -> dict:
    out: dict = {}
    enabled = value.get("enabled")
    if enabled is not None:
        if not isinstance(enabled, bool):
            raise _bad(path + ["enabled"], "must be a boolean")
        out["enabled"] = enabled
    if value.get("timeout") is not None:
        timeout = json_integer(value["timeout"])
        if timeout is None or not 0 < timeout <= MAX_TIMEOUT_MS:
            raise _bad(path + ["timeout"], f"must be an integer between 1 and {MAX_TIMEOUT_MS} (ms)")
        out["timeout"] = timeout
    return out


_STRINGS = {"type": ["object", "null"], "additionalProperties": {"type": "string"}}
_ARG = {"type": "string", "pattern": "^[^\\x00]*$"}
_PROGRAM = {"type": "string", "pattern": f"^[^\\x00]*[^{WHITESPACE}\\x00][^\\x00]*$"}
_COMMON = {"enabled": {"type": ["boolean", "null"]},
           "timeout": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_TIMEOUT_MS}}
_LOCAL = {"type": {"const": "local"}, "environment": _STRINGS,
          "cwd": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 1}]}, **_COMMON}
# What normalize() takes, stated for /doc (a field's to_internal_value and its schema sit side by side).
CONFIG_SCHEMA = {"oneOf": [
    {"type": "object", "required": ["type", "command"], "additionalProperties": False,
     "properties": {**_LOCAL, "command": _PROGRAM,
                    "arguments": {"anyOf": [{"type": "null"}, {"type": "array", "items": _ARG}]}}},
    {"type": "object", "required": ["type", "command"], "additionalProperties": False,
     "properties": {**_LOCAL, "command": {"type": "array", "minItems": 1, "prefixItems": [_PROGRAM], "items": _ARG}}},
    {"type": "object", "required": ["type", "url"], "additionalProperties": False,
     "properties": {"type": {"const": "remote"}, "headers": _STRINGS,
                    "url": {"type": "string", "pattern": URL_PATTERN, "maxLength": 4096},
                    "oauth": {"anyOf": [
                        {"type": ["boolean", "null"]},
                        {"type": "object", "additionalProperties": False, "properties": {
                            **{key: {"type": "string"} for key in ("clientId", "clientSecret", "scope", "redirectUri")},
                            "callbackPort": {"type": ["integer", "null"], "minimum": 1, "maximum": 65535}}}]},
                    **_COMMON}},
]}


def normalize(value, path: list | None = None) -> dict:
    """A clean copy of one server config, or a 400 naming the first problem."""
    path = path or ["config"]
    if not isinstance(value, dict):
        raise _bad(path, "must be an object")
    kind = value.get("type")
    if kind == "local":
        unknown = sorted(set(value) - LOCAL_KEYS)
        if unknown:
            raise _bad(path + [unknown[0]], "unknown key")
        command = value.get("command")
        if isinstance(command, str):
            argv = [command] + (_string_list(value["arguments"], path + ["arguments"])
                                if value.get("arguments") is not None else [])
        elif isinstance(command, list):
            if "arguments" in value:
                raise _bad(path + ["arguments"], "not allowed when command is a list")
            argv = _string_list(command, path + ["command"])
        else:
            raise _bad(path + ["command"], "required: a string or a list of strings")
        if not argv or not argv[0].strip() or any("\x00" in a for a in argv):
            raise _bad(path + ["command"], "must name a program")
        out = {"type": "local", "command": argv,
               "environment": _string_map(value.get("environment"), path + ["environment"])}
        if value.get("cwd") is not None:
            if not isinstance(value["cwd"], str) or not value["cwd"]:
                raise _bad(path + ["cwd"], "must be a non-empty string")
            out["cwd"] = value["cwd"]
        return {**out, **_common(value, path)}
    if kind == "remote":
        unknown = sorted(set(value) - REMOTE_KEYS)
        if unknown:
            raise _bad(path + [unknown[0]], "unknown key")
        url = value.get("url")
        if not isinstance(url, str) or not re.match(URL_PATTERN, url) or len(url) > 4096:
            raise _bad(path + ["url"], "required: an http(s) URL")
        out = {"type": "remote", "url": url, "headers": _string_map(value.get("headers"), path + ["headers"])}
        oauth = value.get("oauth")
        if oauth is False:
            out["oauth"] = False
        elif isinstance(oauth, dict):
            unknown = sorted(set(oauth) - OAUTH_KEYS)
            if unknown:
                raise _bad(path + ["oauth", unknown[0]], "unknown key")
            for key in ("clientId", "clientSecret", "scope", "redirectUri"):
                if key in oauth and not isinstance(oauth[key], str):
                    raise _bad(path + ["oauth", key], "must be a string")
            out["oauth"] = dict(oauth)
            if oauth.get("callbackPort") is not None:
                port = json_integer(oauth["callbackPort"])
                if port is None or not 0 < port < 65536:
                    raise _bad(path + ["oauth", "callbackPort"], "must be a port number")
                out["oauth"]["callbackPort"] = port
        elif oauth is not None and oauth is not True:
            raise _bad(path + ["oauth"], "must be an object or false")
        return {**out, **_common(value, path)}
    raise _bad(path + ["type"], "must be 'local' or 'remote'")


def uses_oauth(config: dict) -> bool:
    """Remote servers try OAuth unless it is switched off with `oauth: false` (opencode's default)."""
    return config.get("type") == "remote" and config.get("oauth") is not False


def sanitize(name: str) -> str:
    """opencode's tool/prompt key component: anything but [A-Za-z0-9_-] becomes `_`."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)
