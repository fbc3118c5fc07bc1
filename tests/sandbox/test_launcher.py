"""The launcher itself (in this process, real bubblewrap): a staff root of `/` does not bring the host back,
and expose= shows one binary, nothing beside it."""
import shutil

from django.conf import settings

from agentserver.sandbox import launcher as sandbox


def test_a_staff_root_of_slash_gets_the_working_directory_not_the_host(db, tmp_path, django_user_model):
    staff = django_user_model.objects.create_user(username="root-staff", password="x", is_staff=True)
    work = tmp_path / "work"
    work.mkdir()
    (settings.DATA_DIR / "secret_key").exists() or (settings.DATA_DIR / "secret_key").write_text("s")
    script = (f"cat {settings.DATA_DIR}/secret_key && echo LEAK-SECRET; ls /proc/1/root/ >/dev/null 2>&1; "
              "ps -e -o pid= | wc -l; echo made > made.txt && cat made.txt")
    result = sandbox.run(staff, ["/bin/sh", "-c", script], cwd=str(work), roots=["/"])
    output = result.stdout.decode()
    assert "LEAK-SECRET" not in output and "made" in output, (output, result.stderr)
    assert int(output.split()[0]) < 10  # its own PID namespace, not the host's processes
    assert (work / "made.txt").read_text() == "made\n"


def test_expose_shows_a_binary_read_only_and_nothing_beside_it(db, tmp_path, django_user_model):
    user = django_user_model.objects.create_user(username="tool-user", password="x")
    root, tools = tmp_path / "root", tmp_path / "tools"
    root.mkdir()
    tools.mkdir()
    shutil.copy("/usr/bin/echo", tools / "tool")
    (tools / "private.txt").write_text("not for users\n")
    result = sandbox.run(user, ["/bin/sh", "-c", f"{tools}/tool exposed; ls {tools}; echo x > {tools}/tool || echo RO"],
                         cwd=str(root), roots=[str(root)], expose=[str(tools / "tool")])
    assert result.stdout.decode().split() == ["exposed", "tool", "RO"], result.stderr
