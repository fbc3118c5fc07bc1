"""The effective opencode config of a runtime context (reference §5.16), layered later-wins:

    defaults ← the user's global config (UserConfig.data) ← the worktree's opencode.jsonc / opencode.json files
    (walking from the directory up to the worktree root, nearest wins) ← the user's overrides for the project
    (Project.config, what PATCH /config writes).

Dicts are deep-merged; `plugin` and `instructions` lists are concatenated without duplicates (as opencode does).
Unlike opencode, `{env:VAR}` / `{file:path}` tokens are NOT substituted: the server's environment and files
belong to the operator, not to the users whose config files we read."""
from __future__ import annotations

import copy
import json
import os
import re
import threading

import orjson
from django.db import transaction

from agentserver import paths
from agentserver.db import json_column
from agentserver.errors import bad_input
from policy_app.config_layer import apply_policy, check_config_patch
from policy_app.selectors import policy_for
from projects_app import store
from projects_app.config_schema import validate_config
from projects_app.projects import project_of

SCHEMA_URL = "https://opencode.ai/config.json"
PROJECT_FILES = ("opencode.jsonc", "opencode.json")
CONCATENATED_LISTS = ("plugin", "instructions")
MAX_CONFIG_FILE_BYTES = 1024 * 1024
REDACTED = "[redacted]"

_SECRET_SUFFIXES = ("apikey", "token", "secret", "password", "credential", "credentials", "authorization")


def defaults(user) -> dict:
    """What 1.18's GET /config fills in when no layer sets it."""
    return {
        "$schema": SCHEMA_URL,
        "agent": {},
        "mode": {},
        "command": {},
        "plugin": [],
        "username": user.get_username() if user is not None else "unknown",
    }


def deep_merge(base: dict, override: dict) -> dict:
    """A new dict: `override` wins; nested dicts merge; lists in CONCATENATED_LISTS (top level) concatenate."""
    return _merge(base, override, top=True)


def _merge(base: dict, override: dict, *, top: bool) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            out[key] = _merge(current, value, top=False)
        elif top and key in CONCATENATED_LISTS and isinstance(current, list) and isinstance(value, list):
            out[key] = current + [item for item in value if item not in current]
        else:
            out[key] = copy.deepcopy(value)
    return out


def _scan(text: str, on_char) -> str:
    """Walk `text` outside JSON strings; `on_char(text, i)` returns (kept text, next index)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            kept, i = on_char(text, i)
            out.append(kept)
    return "".join(out)


def _drop_comment(text: str, i: int) -> tuple[str, int]:
    if text.startswith("//", i):
        end = text.find("\n", i)
        return "", len(text) if end == -1 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return " ", len(text) if end == -1 else end + 2
    return text[i], i + 1


def _drop_trailing_comma(text: str, i: int) -> tuple[str, int]:
    if text[i] == ",":
        j = i + 1
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j < len(text) and text[j] in "}]":
            return "", i + 1
    return text[i], i + 1


def strip_jsonc(text: str) -> str:
    """JSONC → JSON: drop // and /* */ comments, then trailing commas, leaving string contents alone."""
    return _scan(_scan(text, _drop_comment), _drop_trailing_comma)


def parse_jsonc(text: str) -> dict:
    data = json.loads(strip_jsonc(text))
    if not isinstance(data, dict):
        raise ValueError("config must be a JSON object")
    return data


def project_files(context) -> list[str]:
    """The project config files that apply, in merge order (the nearest, and .json after .jsonc, last)."""
    chain = list(reversed(context.directories_up()))
    found: list[str] = []
    for name in PROJECT_FILES:
        for directory in chain:
            candidate = os.path.join(directory, name)
            if not os.path.exists(candidate):
                continue  # one stat; confining (a realpath walk) is for files that are there
            try:
                real = paths.confine(candidate, [context.boundary])
            except paths.OutsideRoots:
                continue  # a symlink leading out of the project is not the project's config
            if os.path.isfile(real):
                found.append(real)
    return found


def read_config_file(path: str) -> dict:
    """A project config file, or {} when unreadable or invalid (a broken file must not break every request).
    Parsed once per content of the file: every turn reads the project's config, and the JSONC scan, in
    Python, cost more than the rest of the turn's setup (the file is still read every time: a change
    within the file system's timestamp granularity keeps its size and times). Each caller gets its own copy."""
    try:
        if os.path.getsize(path) > MAX_CONFIG_FILE_BYTES:
            return {}
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if len(text) > PARSED_FILE_KEPT_CHARS:
            return parse_jsonc(text)
        known = _parsed_files.get(path)
        if known is None or known[0] != text:
            parsed = parse_jsonc(text)
            try:
                kept: bytes | dict = orjson.dumps(parsed)
            except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits: kept as parsed
                kept = parsed
            known = (text, kept)
            with _parsed_lock:
                _parsed_files[path] = known
                while len(_parsed_files) > PARSED_FILES_KEPT:
                    _parsed_files.pop(next(iter(_parsed_files)))
        kept = known[1]
        return orjson.loads(kept) if isinstance(kept, bytes) else copy.deepcopy(kept)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


PARSED_FILES_KEPT = 256  # at most 256 × 2 × 64 KiB kept
PARSED_FILE_KEPT_CHARS = 64 * 1024
_parsed_files: dict[str, tuple[str, bytes | dict]] = {}  # path → (its text, the parsed config, as JSON)
_parsed_lock = threading.Lock()


def user_layer(user) -> dict:
    return _layer(store.user_layer_text(user.pk))


def _stored_layers(context) -> tuple[dict, dict]:
    """The user's and the project's config layers, kept in the database, in one query."""
    layers: list[dict] = [{}, {}]
    for which, text in store.stored_layer_texts(owner_id=context.user.pk, project_id=context.project_id):
        layers[which] = _layer(text)
    return layers[0], layers[1]


def _layer(text: str | None) -> dict:
    data = json_column.loads(text) if text else None
    return reveal_secrets(data) if isinstance(data, dict) else {}


ENCRYPTED = "$encrypted"


def seal_secrets(value):
    """Secret-looking string values (apiKey, token, …) are stored encrypted (design §7)."""
    from auth_app.crypto import encrypt_json

    if isinstance(value, dict):
        return {
            key: ({ENCRYPTED: encrypt_json({"value": item})} if is_secret_key(str(key)) and isinstance(item, str)
                  else seal_secrets(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [seal_secrets(item) for item in value]
    return value


def reveal_secrets(value):
    from auth_app.crypto import CredentialDecryptError, decrypt_json

    if isinstance(value, dict):
        if set(value) == {ENCRYPTED} and isinstance(value[ENCRYPTED], str):
            try:
                return decrypt_json(value[ENCRYPTED]).get("value")
            except CredentialDecryptError:
                return None  # written under a key that was dropped: as if unset
        return {key: reveal_secrets(item) for key, item in value.items()}
    if isinstance(value, list):
        return [reveal_secrets(item) for item in value]
    return value


def effective_config(context) -> dict:
    """The merged config for a runtime context, the organization's policy applied last (policy_app: nothing a
    person or project writes gets past it). Contains secrets: use `redact()` before it leaves the server."""
    user_stored, project_stored = _stored_layers(context)
    config = deep_merge(defaults(context.user), user_stored)
    for path in project_files(context):
        config = deep_merge(config, read_config_file(path))
    return apply_policy(deep_merge(config, project_stored), policy_for(context.user))


def config_setting(context, key: str):
    """One top-level setting that is not an object (`share`, `model`, ...) of the effective config: the last
    layer that sets it wins, as in `effective_config`, without copying and merging every other setting
    (session.create reads `share` on every call)."""
    user_stored, project_stored = _stored_layers(context)
    value = defaults(context.user).get(key)
    for layer in (user_stored, *(read_config_file(path) for path in project_files(context)), project_stored):
        if key in layer:
            value = layer[key]
    return apply_policy({key: value} if value is not None else {}, policy_for(context.user)).get(key)


def is_secret_key(key: str) -> bool:
    """apiKey, api_key, accessToken, client_secret, password, Authorization … but not max_tokens."""
    normalized = re.sub(r"[-_\s]", "", key.lower())
    return normalized.endswith(_SECRET_SUFFIXES)


def redact(value):
    """A copy with every secret-looking value replaced by REDACTED (responses never echo secrets)."""
    if isinstance(value, dict):
        return {
            key: (REDACTED if is_secret_key(str(key)) and item not in (None, "") and not isinstance(item, (dict, list))
                  else redact(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def merge_patch(target: dict, patch: dict) -> dict:
    """RFC 7396: nested dicts merge, null removes a key, anything else replaces."""
    out = copy.deepcopy(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_patch(out[key], value)
        elif isinstance(value, dict):
            out[key] = merge_patch({}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def config_update(*, context, patch) -> dict:
    """Validate `patch` and merge it into the user's overrides for the context's project (PATCH /config).
    Returns the new effective config (unredacted)."""
    _raise_issues(validate_config(patch))
    check_config_patch(patch, policy_for(context.user))
    with transaction.atomic():
        project = store.project_locked_again(project_of(context))
        project.config = merge_patch(project.config if isinstance(project.config, dict) else {}, seal_secrets(patch))
        store.project_saved(project, fields=["config"])
    return effective_config(context)


def config_override_merge(*, context, patch: dict) -> None:
    """Merge a patch the server itself builds (e.g. `{mcp: {name: {enabled: false}}}`, a partial entry the
    Config schema would refuse alone) into the user's overrides for the context's project."""
    with transaction.atomic():
        project = store.project_locked_again(project_of(context))
        project.config = merge_patch(project.config if isinstance(project.config, dict) else {}, seal_secrets(patch))
        store.project_saved(project, fields=["config"])


def _raise_issues(issues: list) -> None:
    if issues:
        raise bad_input(issues)


def global_config_get(*, user) -> dict:
    """The user's global layer over the defaults (global.config.get): what ~/.config/opencode holds in opencode,
    with the organization's policy applied last, as GET /config has it: a client shows what will apply.
    Contains secrets: use `redact()` before it leaves the server."""
    return apply_policy(deep_merge(defaults(user), user_layer(user)), policy_for(user))


def global_config_update(*, user, patch) -> dict:
    """Merge `patch` into the user's global layer (global.config.update); every project of theirs sees it."""
    _raise_issues(validate_config(patch))
    check_config_patch(patch, policy_for(user))
    with transaction.atomic():
        row = store.user_config_locked(user)
        row.data = merge_patch(row.data if isinstance(row.data, dict) else {}, seal_secrets(patch))
        store.user_config_saved(row)
    return global_config_get(user=user)
