"""The content conversions Git applies itself: line endings (``text``/``eol``/``crlf``,
``core.autocrlf``, ``core.eol``) and ``ident`` (``$Id$`` keywords).

Pure functions over bytes; which conversion applies to a path is decided by
``gitodb.repo.conversion`` from the attributes and the configuration.  The rules
and the text/binary guess are Git's (``convert.c``): a blob is binary for
``auto`` when it has a NUL, a lone CR, or more than one non-printable byte per
128 printable ones; ``auto`` never converts a blob that already has CRs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gitodb.errors import GitodbError


class CrlfAction(Enum):
    """Git's ``convert_crlf_action``."""

    UNDEFINED = "undefined"
    BINARY = "binary"
    TEXT = "text"
    TEXT_INPUT = "text-input"
    TEXT_CRLF = "text-crlf"
    AUTO = "auto"
    AUTO_INPUT = "auto-input"
    AUTO_CRLF = "auto-crlf"


_AUTO = (CrlfAction.AUTO, CrlfAction.AUTO_INPUT, CrlfAction.AUTO_CRLF)


class SafeCrlf(Enum):
    """``core.safecrlf``: what to do when a round trip would not restore the file."""

    OFF = "false"
    WARN = "warn"
    DIE = "true"


class SafeCrlfError(GitodbError):
    """``core.safecrlf=true`` and the conversion is not reversible (Git's message)."""


@dataclass
class TextStat:
    """Git's ``text_stat``: counts of line endings and of (non)printable bytes."""

    nul: int = 0
    lonecr: int = 0
    lonelf: int = 0
    crlf: int = 0
    printable: int = 0
    nonprintable: int = 0

    @classmethod
    def gather(cls, data: bytes) -> TextStat:
        """Count ``data`` as Git's ``gather_stats`` does."""
        st = cls()
        st.crlf = data.count(b"\r\n")
        st.lonecr = data.count(b"\r") - st.crlf
        st.lonelf = data.count(b"\n") - st.crlf
        st.nul = data.count(b"\0")
        # bytes below 32 other than BS, HT, ESC, FF (and CR, LF, counted above) and DEL
        control = sum(data.count(bytes([c])) for c in range(32) if c not in (8, 9, 10, 12, 13, 27))
        st.nonprintable = control + data.count(b"\x7f")
        st.printable = len(data) - st.nonprintable - data.count(b"\r") - data.count(b"\n")
        if data.endswith(b"\x1a"):  # a final ^Z (DOS end of file) does not count
            st.nonprintable -= 1
        return st

    def is_binary(self) -> bool:
        """Git's ``convert_is_binary``."""
        return bool(self.lonecr or self.nul or (self.printable >> 7) < self.nonprintable)


def text_eol_is_crlf(autocrlf: str, core_eol: str) -> bool:
    """Whether ``text`` files get CRLF in the work tree (``core.autocrlf``, ``core.eol``)."""
    if autocrlf == "true":
        return True
    if autocrlf == "input":
        return False
    return core_eol == "crlf"  # "native" is LF on the platforms gitodb runs on


def output_eol_is_crlf(action: CrlfAction, autocrlf: str, core_eol: str) -> bool:
    """Git's ``output_eol(action) == EOL_CRLF``."""
    if action in (CrlfAction.TEXT_CRLF, CrlfAction.UNDEFINED, CrlfAction.AUTO_CRLF):
        return True
    if action in (CrlfAction.TEXT, CrlfAction.AUTO):
        return text_eol_is_crlf(autocrlf, core_eol)
    return False


def _will_convert_lf_to_crlf(st: TextStat, action: CrlfAction, crlf_out: bool) -> bool:
    if not crlf_out or not st.lonelf:
        return False
    if action in _AUTO and (st.lonecr or st.crlf or st.is_binary()):
        return False
    return True


def crlf_to_git(
    data: bytes,
    action: CrlfAction,
    *,
    crlf_out: bool,
    safecrlf: SafeCrlf = SafeCrlf.OFF,
    path: str = "",
    warn: list[str] | None = None,
) -> bytes:
    """Line endings on the way in (Git's ``crlf_to_git``).

    ``crlf_out`` says whether the same file would get CRLF on checkout (for the
    round-trip check); with ``safecrlf`` WARN the warning line goes to ``warn``,
    with DIE a ``SafeCrlfError`` is raised.
    """
    if action is CrlfAction.BINARY or not data:
        return data
    st = TextStat.gather(data)
    convert = bool(st.crlf)
    if action in _AUTO and st.is_binary():
        return data
    if safecrlf is not SafeCrlf.OFF:
        new = TextStat(**vars(st))
        if convert:  # simulate "git add"
            new.lonelf += new.crlf
            new.crlf = 0
        if _will_convert_lf_to_crlf(new, action, crlf_out):  # simulate "git checkout"
            new.crlf += new.lonelf
            new.lonelf = 0
        _check_round_trip(st, new, safecrlf, path, warn)
    if not convert:
        return data
    if action in _AUTO:
        return data.replace(b"\r", b"")  # a lone CR made it binary: every CR precedes LF
    return data.replace(b"\r\n", b"\n")


def _check_round_trip(
    old: TextStat, new: TextStat, safecrlf: SafeCrlf, path: str, warn: list[str] | None
) -> None:
    if old.crlf and not new.crlf:
        if safecrlf is SafeCrlf.DIE:
            raise SafeCrlfError(f"CRLF would be replaced by LF in {path}")
        message = (
            f"in the working copy of '{path}', CRLF will be replaced by LF"
            " the next time Git touches it"
        )
    elif old.lonelf and not new.lonelf:
        if safecrlf is SafeCrlf.DIE:
            raise SafeCrlfError(f"LF would be replaced by CRLF in {path}")
        message = (
            f"in the working copy of '{path}', LF will be replaced by CRLF"
            " the next time Git touches it"
        )
    else:
        return
    if warn is not None:
        warn.append(message)


def crlf_to_worktree(data: bytes, action: CrlfAction, *, crlf_out: bool) -> bytes:
    """Line endings on the way out (Git's ``crlf_to_worktree``): LF becomes CRLF."""
    if not data or not crlf_out:
        return data
    st = TextStat.gather(data)
    if not _will_convert_lf_to_crlf(st, action, crlf_out):
        return data
    # every LF not already preceded by CR (a lone CR is never before an LF)
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def count_ident(data: bytes) -> int:
    """Git's ``count_ident``: ``$Id$`` and ``$Id: ... $`` keywords in ``data``."""
    cnt = 0
    i, n = 0, len(data)
    while i < n:
        dollar = data.find(b"$", i)
        if dollar < 0:
            break
        i = dollar + 1
        if n - i < 3:
            break
        if data[i : i + 2] != b"Id":
            continue
        ch = data[i + 2 : i + 3]
        i += 3
        if ch == b"$":
            cnt += 1
        if ch != b":":
            continue
        while i < n:  # "$Id: ..." up to the closing dollar, on the same line
            c = data[i]
            i += 1
            if c == 0x24:
                cnt += 1
                break
            if c == 0x0A:
                break
    return cnt


def ident_to_git(data: bytes) -> bytes:
    """Collapse ``$Id: <anything> $`` to ``$Id$`` (Git's ``ident_to_git``)."""
    if not count_ident(data):
        return data
    out = bytearray()
    src = 0
    n = len(data)
    while True:
        dollar = data.find(b"$", src)
        if dollar < 0:
            break
        out += data[src : dollar + 1]
        src = dollar + 1
        if n - src > 3 and data[src : src + 3] == b"Id:":
            end = data.find(b"$", src + 3)
            if end < 0:
                break
            if b"\n" in data[src + 3 : end]:
                continue  # a line break before the next dollar
            out += b"Id$"
            src = end + 1
    out += data[src:]
    return bytes(out)


def ident_to_worktree(data: bytes, oid_hex: str) -> bytes:
    """Expand ``$Id$`` (and Git-style ``$Id: ... $``) to ``$Id: <blob id> $``."""
    if not count_ident(data):
        return data
    out = bytearray()
    src = 0
    n = len(data)
    keyword = b"Id: " + oid_hex.encode() + b" $"
    while True:
        dollar = data.find(b"$", src)
        if dollar < 0:
            break
        out += data[src : dollar + 1]
        src = dollar + 1
        if n - src < 3 or data[src : src + 2] != b"Id":
            continue
        if data[src + 2] == 0x24:  # "Id$"
            src += 3
        elif data[src + 2] == 0x3A:  # "Id:...$"
            end = data.find(b"$", src + 3)
            if end < 0:
                break  # an incomplete keyword and no more dollars
            if b"\n" in data[src + 3 : end]:
                continue
            space = data.find(b" ", src + 4, end)
            if 0 <= space < end - 1:
                continue  # spaces where Git's ids have none: another system's id, kept
            src = end + 1
        else:
            continue
        out += keyword
    out += data[src:]
    return bytes(out)
