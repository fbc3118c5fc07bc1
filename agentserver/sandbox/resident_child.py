"""The program a resident sandbox runs (agentserver/sandbox/resident.py). It is not imported by the server:
its text is passed to the system's python3 with -c, inside the user's sandbox, where the server's own code
is hidden. Standard library only.

A first line `{"ready": true}` on stdout says it started; then one request per line on stdin (JSON: id,
argv, cwd, env, input as base64 or null, timeout), one answer per line on stdout (id, returncode, stdout and stderr as base64; or timeout: true). Each program runs in a
session of its own. Nothing a finished program started outlives it: whenever no request is in flight, every
other process in this sandbox's PID namespace is killed (what ending a one-shot sandbox did)."""
import base64
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

LINGER = 0.2

_answer_lock = threading.Lock()
_busy_lock = threading.Lock()
_busy = [0]


def _answer(message):
    line = (json.dumps(message) + "\n").encode()
    with _answer_lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def _sweep():
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me):
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def _encoded(data):
    return base64.b64encode(data or b"").decode()


def _run(request):
    data = base64.b64decode(request["input"]) if request.get("input") is not None else None
    try:
        # Inside the user's sandbox already (mounts, uid, limits, no network: sandbox.prepare's confinement).
        process = subprocess.Popen(
            request["argv"], cwd=request["cwd"], env=request["env"], start_new_session=True,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        # As the one-shot launcher's exec would have: status 127 and the reason on stderr.
        return {"returncode": 127, "stdout": "", "stderr": _encoded(f"{request['argv'][0]}: {error}\n".encode())}
    if data is not None:
        threading.Thread(target=_feed, args=(process.stdin, data), daemon=True).start()
    output = _collect(process, request.get("timeout"))
    if output is None:
        return {"timeout": True}
    out, err = output
    return {"returncode": process.returncode, "stdout": _encoded(out), "stderr": _encoded(err)}


def _feed(pipe, data):
    try:
        pipe.write(data)
        pipe.close()
    except OSError:
        pass


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _collect(process, timeout):
    """(stdout, stderr) of the program, or None when it ran past `timeout` (then it and its group are
    killed). When the program exits, what is left of its process group is killed, as a one-shot sandbox's
    end would; a process that left the group and still holds the pipes gets LINGER seconds, then is not
    waited for (the sweep ends it)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    chunks = {out_fd: [], err_fd: []}
    reading = {out_fd, err_fd}
    exited = None
    timed_out = False
    while reading:
        now = time.monotonic()
        if exited is None and process.poll() is not None:
            exited = now
            _kill_group(process.pid)
        if exited is None and deadline is not None and now > deadline:
            timed_out = True
            _kill_group(process.pid)
            break
        if exited is not None and now - exited > LINGER:
            break
        ready, _, _ = select.select(list(reading), [], [], 0.05)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                chunks[fd].append(chunk)
            else:
                reading.discard(fd)
    process.wait()
    _kill_group(process.pid)
    process.stdout.close()
    process.stderr.close()
    if timed_out:
        return None
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _serve(request):
    _answer({"id": request.get("id"), "started": True})
    try:
        answer = _run(request)
    except Exception as error:  # a malformed request: answer it rather than leave the caller waiting
        answer = {"returncode": 127, "stdout": "", "stderr": _encoded(repr(error).encode())}
    answer["id"] = request.get("id")
    with _busy_lock:
        _busy[0] -= 1
        if _busy[0] == 0:
            _sweep()
    _answer(answer)


def main():
    _answer({"ready": True})
    for line in sys.stdin.buffer:
        request = json.loads(line)
        with _busy_lock:
            _busy[0] += 1
        threading.Thread(target=_serve, args=(request,), daemon=True).start()


if __name__ == "__main__":  # python3 -c runs it as __main__; an import (a linter, a tool) must not
    main()
