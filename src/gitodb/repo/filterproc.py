"""Git's long-running filter protocol (``filter.<driver>.process``).

One process per command line serves every path of a run: it is started through
the shell on first use, greeted (``git-filter-client``/``git-filter-server``,
version 2), told the capabilities Git offers (``clean``, ``smudge``, ``delay``)
and kept until the run ends, when its pipes are closed and it is waited for, as
Git does.  Each file is a request in pkt-lines: ``command=``, ``pathname=`` and
for smudge ``blob=``, a flush, the content in packets, a flush; the answer is a
status list, the new content and a second status list (the last ``status=``
wins).  ``error`` fails that file, ``abort`` stops the filter for that command
for the rest of the run, anything else (a broken pipe, a short read) stops the
process, which is started again for the next file.

As in Git 2.55, a failed greeting is reported (``could not read greeting from
subprocess``...) and so is a failure later in the exchange; the file is left
unconverted, which the caller turns into a fatal error for a required filter.
"""

from __future__ import annotations

import atexit
import subprocess
import sys
from collections.abc import Callable

from gitodb.errors import GitodbError

#: Git's LARGE_PACKET_DATA_MAX: the most data one pkt-line carries
PACKET_DATA_MAX = 65520 - 4
_CAPABILITIES = ("clean", "smudge", "delay")


class FilterProtocolError(GitodbError):
    """The greeting of a filter process failed: Git's ``error:`` line, or with
    ``fatal`` its ``fatal:`` line (``details``: ``error:`` lines printed before)."""

    def __init__(self, message: str, *, details: list[str] | None = None, fatal: bool = False):
        super().__init__(message, details=details)
        self.fatal = fatal


class _HungUp(Exception):
    """The process closed its end (Git's ``packet_read`` at end of file)."""


class _Broken(Exception):
    """The exchange failed after the greeting (a write or read went wrong)."""


class FilterProcess:
    """One running ``filter.<driver>.process`` command."""

    def __init__(self, command: str, argv: list[str], cwd: str | None) -> None:
        self.command = command
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd)
        self.capabilities: set[str] = set()

    # ------------------------------------------------------------ pkt-lines
    def _write(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"%04x" % (len(payload) + 4) + payload)
        except (BrokenPipeError, OSError, ValueError):
            raise _Broken() from None

    def _flush(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"0000")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Broken() from None

    def _read(self) -> bytes | None:
        """One packet's payload; None for a flush.  ``_HungUp`` at end of file."""
        assert self.proc.stdout is not None
        head = self.proc.stdout.read(4)
        if len(head) < 4:
            raise _HungUp()
        try:
            size = int(head, 16)
        except ValueError:
            raise _HungUp() from None  # Git: "protocol error: bad line length"
        if size in (0, 1, 2):
            return None
        if size < 4:
            raise _HungUp()
        payload = self.proc.stdout.read(size - 4)
        if len(payload) != size - 4:
            raise _HungUp()
        return payload

    def _read_line(self) -> str | None:
        """A text packet without its newline; None for a flush."""
        payload = self._read()
        if payload is None:
            return None
        return payload.removesuffix(b"\n").decode("utf-8", "replace")

    def _read_status(self, status: str) -> str:
        """A ``key=value`` list up to a flush: the last ``status=`` or ``status``."""
        while (line := self._read_line()) is not None:
            if line.startswith("status="):
                status = line[len("status=") :]
        return status

    # ------------------------------------------------------------ protocol
    def handshake(self) -> None:
        """Greet the process and learn its capabilities (Git 2.55's handshake, which
        reports a process that went away instead of dying); ``FilterProtocolError``
        names what failed."""
        cmd = self.command

        def read(what: str) -> str | None:
            try:
                return self._read_line()
            except _HungUp:
                raise FilterProtocolError(
                    f"could not read {what} from subprocess '{cmd}'"
                ) from None

        try:
            self._write(b"git-filter-client\n")
            self._write(b"version=2\n")
            self._flush()
        except _Broken:
            raise FilterProtocolError(
                "Could not write client identification", details=["packet write with format failed"]
            ) from None
        line = read("greeting")
        if line != "git-filter-server":
            raise _unexpected(line, "expected git-filter-server")
        line = read("version")
        if line is None or not line.startswith("version=") or not line[8:].isdigit():
            raise _unexpected(line, "expected version")
        version = line[len("version=") :]
        line = read("version flush")
        if line is not None:
            raise _unexpected(line, "expected flush")
        if version != "2":
            raise FilterProtocolError(f"Version {int(version)} not supported")
        try:
            for name in _CAPABILITIES:
                self._write(b"capability=%s\n" % name.encode())
            self._flush()
        except _Broken:
            raise FilterProtocolError("Could not write requested capability") from None
        while (line := read("capabilities")) is not None:
            if not line.startswith("capability="):
                continue
            name = line[len("capability=") :]
            if name not in _CAPABILITIES:
                # Git dies here: the process asked for what Git never offered
                raise FilterProtocolError(
                    f"subprocess '{cmd}' requested unsupported capability '{name}'", fatal=True
                )
            self.capabilities.add(name)

    def filter(self, command: str, path: str, data: bytes, blob: str | None) -> tuple[str, bytes]:
        """Send one file: ``("success", new content)`` or ``(status, b"")`` where the
        status is the filter's (``error``, ``abort``) or ``"broken"``."""
        try:
            self._write(b"command=%s\n" % command.encode())
            self._write(b"pathname=%s\n" % path.encode("utf-8", "surrogateescape"))
            if blob is not None:
                self._write(b"blob=%s\n" % blob.encode())
            self._flush()
            for start in range(0, len(data), PACKET_DATA_MAX):
                self._write(data[start : start + PACKET_DATA_MAX])
            self._flush()
            status = self._read_status("")
            if status != "success":
                return status, b""
            chunks: list[bytes] = []
            while (payload := self._read()) is not None:
                chunks.append(payload)
            status = self._read_status(status)
        except (_Broken, _HungUp):
            return "broken", b""
        return status, (b"".join(chunks) if status == "success" else b"")

    def stop(self, say: Callable[[str], None] | None = None) -> None:
        """Close the pipes (the process's signal to shut down) and wait for it; with
        ``say``, first end it with SIGTERM as Git stops a process that failed, and
        report its death as Git's ``finish_command`` does."""
        if say is not None and self.proc.poll() is None:
            self.proc.terminate()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass  # a process that went away leaves a broken pipe: nothing to flush
        status = self.proc.wait()
        if say is not None and status < 0 and -status not in (2, 3, 13):  # INT, QUIT, PIPE
            say(f"error: {self.command} died of signal {-status}")


def _unexpected(line: str | None, expected: str) -> FilterProtocolError:
    return FilterProtocolError(f"Unexpected line '{line or '<flush packet>'}', {expected}")


class FilterProcesses:
    """The filter processes of one run, by command line; all stopped at exit."""

    def __init__(self, argv: Callable[[str], list[str]], cwd: str | None) -> None:
        self._argv = argv
        self._cwd = cwd
        self._running: dict[str, FilterProcess] = {}
        # capabilities taken away by "abort", for the rest of the run
        self._aborted: dict[str, set[str]] = {}
        atexit.register(self.stop_all)

    def apply(
        self,
        command_line: str,
        which: str,
        path: str,
        data: bytes,
        blob: str | None,
        say: Callable[[str], None],
    ) -> bytes | None:
        """``data`` through the ``which`` (clean/smudge) filter of ``command_line``, or
        None when it did not filter it (Git's messages go to ``say``)."""
        process = self._running.get(command_line)
        if process is None:
            sys.stdout.flush()
            try:
                process = FilterProcess(command_line, self._argv(command_line), self._cwd)
            except OSError as e:
                say(f"error: cannot run {command_line}: {e.strerror}")
                say(f"error: cannot fork to run subprocess '{command_line}'")
                return None
            try:
                process.handshake()
            except FilterProtocolError as e:
                if e.fatal:
                    process.stop()
                    raise
                for line in e.details:
                    say(f"error: {line}")
                say(f"error: {e.message}")
                say(f"error: initialization for subprocess '{command_line}' failed")
                process.stop(say)
                return None
            self._running[command_line] = process
        if which not in process.capabilities - self._aborted.get(command_line, set()):
            return None
        status, out = process.filter(which, path, data, blob)
        if status == "success":
            return out
        if status == "abort":
            self._aborted.setdefault(command_line, set()).add(which)
        elif status != "error":
            say(f"error: external filter '{command_line}' failed")
            del self._running[command_line]
            process.stop(say)
        return None

    def stop_all(self) -> None:
        """Stop every running process (at the end of the run)."""
        while self._running:
            _, process = self._running.popitem()
            process.stop()
