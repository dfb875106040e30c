"""Path arguments as Git reads them: prefix joining, normalisation, relative display.

``normalize_pathspec`` is Git's ``prefix_path`` (a path given in a subdirectory is
taken relative to it; ``..`` may climb, but not above the top), with the two pieces
of pathspec magic ``ls-tree`` supports: ``:/``/``:(top)`` and ``:(literal)``.
``relative_path`` is Git's ``relative_path``: how a path from the top is shown
from a subdirectory (``../a``, ``./``).
"""

from __future__ import annotations

from gitodb.errors import GitodbError

SUPPORTED_MAGIC = ("top", "literal")
_MAGIC_WORDS = ("top", "literal", "glob", "icase", "attr", "exclude")


def _normalize(path: str) -> str | None:
    """Collapse ``//``, ``./`` and ``..``; None when it climbs above the top."""
    parts: list[str] = []
    # A path ending in "/", "." or ".." names a directory: it keeps a trailing "/".
    trailing = path.endswith("/") or path.rsplit("/", 1)[-1] in (".", "..")
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    out = "/".join(parts)
    if out and trailing:
        out += "/"
    return out


def normalize_pathspec(arg: str, prefix: str, work_tree: str) -> str:
    """The path from the top that ``arg`` (given in ``prefix``) names; Git's errors."""
    if arg == "":
        raise GitodbError(
            "empty string is not a valid pathspec. please use . instead if you "
            "meant to match all paths"
        )
    elt = arg
    use_prefix = prefix
    if arg.startswith(":"):
        if arg.startswith(":/"):
            arg, use_prefix = arg[2:], ""
        elif arg.startswith(":("):
            close = arg.find(")")
            words = arg[2:close].split(",") if close > 0 else []
            for w in words:
                name = w.split("=", 1)[0]
                if name not in _MAGIC_WORDS:
                    raise GitodbError(f"Invalid pathspec magic '{w}' in '{elt}'")
                if name not in SUPPORTED_MAGIC:
                    raise GitodbError(
                        f"{elt}: pathspec magic not supported by this command: '{name}'"
                    )
            if "top" in words:
                use_prefix = ""
            arg = arg[close + 1 :]
        else:
            # ":" followed by other short magic; only "/" is supported here.
            raise GitodbError(f"{elt}: pathspec magic not supported by this command: '{arg[1:2]}'")
    out = _normalize(use_prefix + arg)
    if out is None:
        raise GitodbError(f"{elt}: '{elt}' is outside repository at '{work_tree}'")
    return out


def relative_path(path: bytes, prefix: bytes | None) -> bytes:
    """Git's ``relative_path(path, prefix)`` for repository paths (``/`` separated)."""
    if not path:
        return b"./"
    if not prefix:
        return path
    i = j = 0
    prefix_off = in_off = 0
    plen, ilen = len(prefix), len(path)
    while i < plen and j < ilen and prefix[i] == path[j]:
        if prefix[i] == 0x2F:
            while i < plen and prefix[i] == 0x2F:
                i += 1
            while j < ilen and path[j] == 0x2F:
                j += 1
            prefix_off, in_off = i, j
        else:
            i += 1
            j += 1
    if i >= plen and prefix_off < plen:
        if j >= ilen:
            in_off = ilen
        elif path[j] == 0x2F:
            while j < ilen and path[j] == 0x2F:
                j += 1
            in_off = j
        else:
            i = prefix_off
    elif j >= ilen and in_off < ilen and i < plen and prefix[i] == 0x2F:
        while i < plen and prefix[i] == 0x2F:
            i += 1
        in_off = ilen
    rest = path[in_off:]
    if i >= plen:
        return rest or b"./"
    out = bytearray()
    while i < plen:
        if prefix[i] == 0x2F:
            out += b"../"
            while i < plen and prefix[i] == 0x2F:
                i += 1
            continue
        i += 1
    if prefix[-1] != 0x2F:
        out += b"../"
    return bytes(out + rest)
