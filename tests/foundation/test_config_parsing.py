"""JSONC parsing, merging and redaction of config (no server needed)."""
import pytest

from projects_app.config import REDACTED, deep_merge, is_secret_key, merge_patch, parse_jsonc, redact


def test_jsonc_comments_and_trailing_commas_are_accepted():
    text = '{\n // line\n "a": "http://x//y", /* block */ "b": [1, 2,],\n "c": {"d": "/* not a comment */",},\n}'
    assert parse_jsonc(text) == {"a": "http://x//y", "b": [1, 2], "c": {"d": "/* not a comment */"}}


def test_escaped_quotes_inside_strings_do_not_end_them():
    assert parse_jsonc(r'{"a": "say \"hi\", // still text"}') == {"a": 'say "hi", // still text'}


@pytest.mark.parametrize("text", ["[1, 2]", "{ nope", '"str"'])
def test_invalid_or_non_object_config_is_refused(text):
    with pytest.raises(ValueError):
        parse_jsonc(text)


def test_deep_merge_merges_dicts_and_concatenates_plugins():
    base = {"plugin": ["a"], "agent": {"build": {"temperature": 0, "prompt": "x"}}, "model": "a/b"}
    over = {"plugin": ["a", "b"], "agent": {"build": {"temperature": 1}}, "model": "c/d"}
    assert deep_merge(base, over) == {
        "plugin": ["a", "b"], "agent": {"build": {"temperature": 1, "prompt": "x"}}, "model": "c/d"}
    assert base["agent"]["build"]["temperature"] == 0  # inputs untouched


def test_merge_patch_removes_keys_given_null():
    assert merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"a": None, "b": {"c": None}}) == {"b": {"d": 3}}


def test_secret_keys_are_recognised_and_redacted():
    for key in ("apiKey", "api_key", "accessToken", "refresh_token", "clientSecret", "password", "Authorization"):
        assert is_secret_key(key), key
    for key in ("max_tokens", "tokens", "baseURL", "key", "model"):
        assert not is_secret_key(key), key
    assert redact({"options": {"apiKey": "sk", "baseURL": "u"}, "list": [{"token": "t"}], "empty": {"apiKey": ""}}) == {
        "options": {"apiKey": REDACTED, "baseURL": "u"}, "list": [{"token": REDACTED}], "empty": {"apiKey": ""}}


def test_a_config_file_read_again_gives_its_new_content_and_a_fresh_copy(tmp_path):
    """read_config_file keeps the parse of a file's last content: an edit of the same size in the same
    instant (the file system's timestamps are coarse) still counts, and no caller sees another's changes."""
    from projects_app.config import read_config_file

    path = tmp_path / "opencode.jsonc"
    path.write_text('{"model": "a/b", // first\n "agent": {"x": {"steps": 1}}}')
    first = read_config_file(str(path))
    assert first == {"model": "a/b", "agent": {"x": {"steps": 1}}}
    first["agent"]["x"]["steps"] = 99
    assert read_config_file(str(path))["agent"]["x"]["steps"] == 1
    path.write_text('{"model": "c/d", // first\n "agent": {"x": {"steps": 2}}}')
    assert read_config_file(str(path)) == {"model": "c/d", "agent": {"x": {"steps": 2}}}
    path.write_text('{"big": 123456789012345678901234567890}')
    assert read_config_file(str(path)) == {"big": 123456789012345678901234567890}
    path.write_text("{broken")
    assert read_config_file(str(path)) == {}
