"""A program the event loop awaits, started off the loop (sandbox.start's process).

asyncio's create_subprocess_exec under uvloop forks the whole worker on the loop's thread with the GIL held:
in a worker of a few hundred MB that took 90–200 ms per call, during which no request, stream or other agent
made progress (a batch of agents running bash froze the worker once per command). subprocess.Popen uses
vfork, which does not copy the parent's page tables, and is called here on a thread, so the loop goes on.
The loop then reads the output from a pipe it watches and learns of the exit from a pidfd becoming
readable: no thread waits for the program, and nothing polls. Each descriptor has one owner, which closes
it once."""
from __future__ import annotations

import asyncio
import os
import subprocess

from agentserver.sandbox.launch import Launch

READ_LIMIT = 2 ** 16


class LoopProcess:
    """The subset of asyncio.subprocess.Process the tools use: pid, returncode, stdout, wait(), communicate(),
    kill()."""

    def __init__(self, popen: subprocess.Popen, stdout: asyncio.StreamReader | None):
        self._popen = popen
        self.pid = popen.pid
        self.stdout = stdout
        self._exit: asyncio.Future | None = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        if self._popen.poll() is not None:
            return self._popen.returncode
        if self._exit is None:
            self._exit = asyncio.ensure_future(self._exited())
        await asyncio.shield(self._exit)
        return self._popen.returncode

    async def _exited(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self.pid)
        except ProcessLookupError:  # reaped meanwhile
            self._popen.wait()
            return
        readable = loop.create_future()
        loop.add_reader(pidfd, lambda: readable.done() or readable.set_result(None))
        try:
            if self._popen.poll() is None:
                await readable
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        self._popen.wait()  # it has exited: this reaps it at once

    async def communicate(self) -> tuple[bytes, None]:
        output = await self.stdout.read() if self.stdout is not None else b""
        await self.wait()
        return output, None

    def kill(self) -> None:
        self._popen.kill()


async def spawn(launch: Launch, *, stdout=None, **kwargs) -> LoopProcess:
    """Start what sandbox.prepare made (never a bare argv: this is the launcher's async path, not a second
    launcher); Popen's keyword arguments, stdout may be PIPE, read through the loop; stderr may not be."""
    if kwargs.get("stderr") == subprocess.PIPE or kwargs.get("stdin") == subprocess.PIPE:
        raise ValueError("only stdout is read through the loop")
    loop = asyncio.get_running_loop()
    # The output pipe is ours, not a Popen file object's: uvloop's pipe transport closes the descriptor and
    # then the file object closes it again, and by then another thread may have been given that number
    # (a concurrent bash call failed with EBADF).
    read_fd = write_fd = None
    if stdout == subprocess.PIPE:
        read_fd, write_fd = os.pipe()
        stdout = write_fd
    pipe = (read_fd, write_fd) if read_fd is not None else ()
    starting = asyncio.ensure_future(asyncio.to_thread(subprocess.Popen, launch.argv, cwd=launch.cwd, env=launch.env,
                                                       stdout=stdout, **kwargs))
    try:
        popen = await asyncio.shield(starting)
    except asyncio.CancelledError:  # the program may still start, on its thread: nobody is left to want it
        starting.add_done_callback(lambda done: _abandon(done, pipe))
        raise
    except BaseException:
        _abandon(starting, pipe)
        raise
    reader = None
    if read_fd is not None:
        os.close(write_fd)  # the program holds its own copy: the pipe ends when it (and its children) exit
        reader = _read_through_loop(loop, read_fd)
    return LoopProcess(popen, reader)


def _abandon(starting: asyncio.Future, pipe: tuple) -> None:
    if not starting.cancelled() and starting.exception() is None:
        starting.result().kill()
    for fd in pipe:
        os.close(fd)


def _read_through_loop(loop, fd: int) -> asyncio.StreamReader:
    """Feed what arrives on `fd` into a StreamReader, from the loop, until end of file; then close `fd`."""
    os.set_blocking(fd, False)
    reader = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)

    def readable() -> None:
        try:
            data = os.read(fd, READ_LIMIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            reader.feed_data(data)
            return
        loop.remove_reader(fd)
        os.close(fd)
        reader.feed_eof()

    loop.add_reader(fd, readable)
    return reader
