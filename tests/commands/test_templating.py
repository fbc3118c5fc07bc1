"""Command templating (reference §5.12): argument splitting, $N / $ARGUMENTS, appended arguments, shell
substitution, @references."""
import os

from django.conf import settings

from sessions_app.runtime.command_template import expand, fill, split_arguments, substitute_shell
from sessions_app.runtime.commands import hints, parse_frontmatter

OBSERVED = "Say hi to $1 then $2 all=[$ARGUMENTS] sh=!`echo shellsub` file @a.txt"


def test_quoted_arguments_and_image_tokens_are_single_arguments():
    assert split_arguments('alice "bob smith" carol') == ["alice", "bob smith", "carol"]
    assert split_arguments("a [Image 1] 'x y'  z") == ["a", "[Image 1]", "x y", "z"]
    assert split_arguments("") == []


def test_the_highest_placeholder_swallows_the_remaining_arguments():
    assert fill("$1 | $2", "a b c d") == "a | b c d"
    assert fill("$2 then $1", "a b c") == "b c then a"


def test_missing_arguments_become_empty_and_arguments_is_the_raw_string():
    assert fill("[$1][$2][$3]", "only") == "[only][][]"
    assert fill("all=$ARGUMENTS and $ARGUMENTS", 'x "y z"') == 'all=x "y z" and x "y z"'


def test_arguments_are_appended_only_without_any_placeholder():
    assert fill("Do it.", "now please") == "Do it.\n\nnow please"
    assert fill("Do it.", "   ") == "Do it."
    assert fill("Do $1.", "") == "Do ."


def test_shell_substitution_uses_stdout_and_the_allowlisted_environment(alice, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "must-not-leak")
    text = substitute_shell("a=!`echo $SECRET_KEY-x` b=!`pwd` c=!`echo $HOME`", user=alice.user,
                            cwd=str(alice.root), home="/h")
    home = os.path.join(settings.DATA_DIR, "users", str(alice.user.pk), "home")  # the sandbox's HOME
    assert text == f"a=-x\n b={os.path.realpath(alice.root)}\n c={home}\n"


def test_the_observed_example(alice):
    from projects_app.contexts import context_for_directory

    (alice.repo / "a.txt").write_text("content of a\n")
    context = context_for_directory(alice.user, str(alice.repo))
    parts = expand(OBSERVED, 'alice "bob smith" carol', context=context, roots=[str(alice.root)],
                   agent_names={"build", "explore"})
    assert parts[0] == {"type": "text", "text": 'Say hi to alice then bob smith carol all=[alice "bob smith" carol] '
                                                'sh=shellsub\n file @a.txt'}
    real = os.path.realpath(alice.repo / "a.txt")
    assert parts[1:] == [{"type": "file", "url": f"file://{real}", "filename": "a.txt", "mime": "text/plain"}]


def test_references_to_directories_agents_missing_and_outside_files(alice, tmp_path):
    from projects_app.contexts import context_for_directory

    (alice.repo / "src").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    context = context_for_directory(alice.user, str(alice.repo))
    parts = expand(f"look at @src and ask @explore, not @missing.txt nor @{outside} or @~/nothing",
                   "", context=context, roots=[str(alice.root)], agent_names={"explore"})
    assert parts[1:] == [
        {"type": "file", "url": f"file://{os.path.realpath(alice.repo / 'src')}", "filename": "src",
         "mime": "application/x-directory"},
        {"type": "agent", "name": "explore"},
    ]


def test_hints_and_frontmatter():
    assert hints("do $2 and $1 then $ARGUMENTS $1") == ["$1", "$2", "$ARGUMENTS"]
    assert hints("nothing") == []
    meta, body = parse_frontmatter('---\ndescription: "Run it"\nagent: plan\nsubtask: true\n---\nBody $1\n')
    assert meta == {"description": "Run it", "agent": "plan", "subtask": True}
    assert body == "Body $1\n"
