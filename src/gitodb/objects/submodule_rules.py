"""What Git's fsck refuses in a ``.gitmodules`` blob: submodule names, URLs, paths
and update settings that could make a clone write or run what it should not
(CVE-2018-11235, CVE-2018-17456, CVE-2020-11008 and their kin).

Written from the behaviour of Git's ``check_submodule_name``,
``check_submodule_url`` and ``fsck_gitmodules_fn``:

- a name is refused when empty or when ``..`` is one of its components (``/`` and
  ``\\`` both separate components);
- a URL is refused when it starts with ``-``; a relative URL (``./``, ``../``) or a
  ``git://`` one when, URL-decoded, it holds a newline, or when its leading ``../``
  steps are followed by ``:`` or ``/``; an ``http(s)``/``ftp(s)`` URL (also as
  ``http::...``) when it is not a well-formed URL (no host, a bad port, a bad
  ``%`` escape) or, decoded, holds a newline;
- a path is refused when it starts with ``-``, an update setting when it is a
  command (``!...``).
"""

from __future__ import annotations

import re

__all__ = [
    "check_submodule_name",
    "check_submodule_url",
    "gitmodules_problems",
    "url_decode",
]

_ESCAPE = re.compile(rb"%([0-9a-fA-F]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def check_submodule_name(name: str) -> bool:
    """True when Git accepts ``name`` as a submodule name."""
    if not name:
        return False
    return ".." not in re.split(r"[/\\]", name)


def url_decode(url: str) -> str:
    """``%XX`` escapes decoded (others left as they are), bytes as ``surrogateescape``."""
    raw = url.encode("utf-8", "surrogateescape")
    return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode(
        "utf-8", "surrogateescape"
    )


def _leading_dotdots(url: str) -> tuple[int, str]:
    """Git's ``count_leading_dotdots``: how many ``../`` lead (``./`` skipped), and the rest."""
    count = 0
    while True:
        if url.startswith("../"):
            count += 1
            url = url[3:]
        elif url.startswith("./"):
            url = url[2:]
        else:
            return count, url


def _well_formed(url: str) -> bool:
    """Whether Git's ``url_normalize`` accepts ``url`` (scheme, host, port, escapes)."""
    m = _SCHEME.match(url)
    if m is None:
        return False
    rest = url[m.end() :]
    if re.search(r"%(?![0-9a-fA-F]{2})", rest):
        return False  # an invalid %XX escape
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return False
        host, port_part = hostport[: end + 1], hostport[end + 1 :]
        if port_part and not port_part.startswith(":"):
            return False
        port = port_part[1:]
    else:
        host, _colon, port = hostport.partition(":")
    if not host and not url.lower().startswith("file:"):
        return False
    if port:
        if not port.isdigit() or not 0 < int(port) <= 65535:
            return False
    return True


def check_submodule_url(url: str) -> bool:
    """True when Git accepts ``url`` as a submodule URL."""
    if url.startswith("-"):
        return False
    if url.startswith(("./", "../")) or url.startswith("git://"):
        if "\n" in url_decode(url):
            return False
        count, rest = _leading_dotdots(url)
        return not (count > 0 and rest[:1] in (":", "/"))
    curl: str | None = None
    for prefix in ("http::", "https::", "ftp::", "ftps::"):
        if url.startswith(prefix):
            curl = url[len(prefix) :]
            break
    else:
        if url.startswith(("http://", "https://", "ftp://", "ftps://")):
            curl = url
    if curl is None:
        return True
    return _well_formed(curl) and "\n" not in url_decode(curl)


def gitmodules_problems(entries: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
    """``(msgId, text)`` for each problem of a ``.gitmodules`` file's entries
    (``(key, value)`` in file order, keys as Git's config parser gives them:
    ``submodule.<name>.<var>``), in Git's order."""
    found: list[tuple[str, str]] = []
    for key, value in entries:
        section, dot, tail = key.partition(".")
        name, dot2, var = tail.rpartition(".")
        if section != "submodule" or not dot or not dot2:
            continue  # not a submodule setting, or one without a name
        if not check_submodule_name(name):
            found.append(("gitmodulesName", f"disallowed submodule name: {name}"))
        if value is None:
            continue
        if var == "url" and not check_submodule_url(value):
            found.append(("gitmodulesUrl", f"disallowed submodule url: {value}"))
        if var == "path" and value.startswith("-"):
            found.append(("gitmodulesPath", f"disallowed submodule path: {value}"))
        if var == "update" and value.startswith("!"):
            found.append(("gitmodulesUpdate", f"disallowed submodule update setting: {value}"))
    return found
