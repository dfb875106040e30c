"""``include.path`` and ``includeIf.<condition>.path``, followed as Git follows them.

An include is read in place, as if its text stood where the ``path`` line is.
A relative path is relative to the directory of the file that names it (an
error from the command line); ``~/``, ``~user/`` and ``%(prefix)/`` are
expanded; a missing file is nothing; more than ten nested includes are fatal.

Conditions (others are false, as in Git):

- ``gitdir:<pattern>`` / ``gitdir/i:<pattern>``: the git directory matches the
  glob (``**/`` put in front of a relative pattern, ``**`` after a trailing
  ``/``, ``./`` meaning the including file's directory), tried against the real
  path and then the absolute one.
- ``onbranch:<pattern>``: HEAD is a symref to ``refs/heads/<name>`` and
  ``<name>`` matches.
- ``hasconfig:remote.*.url:<pattern>``: some ``remote.<name>.url`` anywhere in
  the configuration matches.  Knowing that needs the whole configuration, so
  the reader first scans it with every such condition taken as true (where a
  conditionally included file may not set a remote URL), then reads it again.
"""

from __future__ import annotations

import os

from gitodb.errors import ConfigError, report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: Git's MAX_INCLUDE_DEPTH
MAX_INCLUDE_DEPTH = 10

_HASCONFIG_URL = "hasconfig:remote.*.url:"


class NeedRemoteUrls(Exception):
    """A ``hasconfig:remote.*.url:`` condition met before the URLs are known."""


class Includes:
    """What deciding include conditions needs, and the state of one read.

    ``git_dir`` is the repository's git directory (None outside a repository:
    ``gitdir:`` is then false); ``head_branch`` gives the branch HEAD names
    (None when detached or unknown); ``remote_urls`` is None until known.
    ``scanning`` is the first pass for ``hasconfig:``.
    """

    def __init__(
        self,
        git_dir: str | None = None,
        head_branch: Callable[[], str | None] | None = None,
        remote_urls: list[str] | None = None,
        *,
        scanning: bool = False,
    ) -> None:
        self.git_dir = git_dir
        self.head_branch = head_branch
        self.remote_urls = remote_urls
        self.scanning = scanning
        self.depth = 0
        #: inside a file included by an ``includeIf`` while scanning (Git's forbid_remote_url)
        self.conditional = 0
        #: an ``onbranch:`` condition was asked
        self.asked_branch = False

    def check_entry(self, key: str, value: str | None) -> None:
        """While scanning, collect remote URLs and refuse them where Git does."""
        if not self.scanning:
            return
        section, _, rest = key.partition(".")
        sub, _, var = rest.rpartition(".")
        if section != "remote" or not sub or var != "url":
            return
        if self.conditional:
            raise ConfigError(
                "remote URLs cannot be configured in file directly or indirectly "
                "included by includeIf.hasconfig:remote.*.url"
            )
        if value is not None and self.remote_urls is not None:
            self.remote_urls.append(value)

    def condition(self, cond: str, source: str | None) -> bool:
        """Whether ``includeIf.<cond>.path`` applies (``source``: the file naming it)."""
        for word, icase in (("gitdir:", False), ("gitdir/i:", True)):
            if cond.startswith(word):
                return self._gitdir(cond[len(word) :], source, icase)
        if cond.startswith("onbranch:"):
            self.asked_branch = True
            return self._onbranch(cond[len("onbranch:") :])
        if cond.startswith(_HASCONFIG_URL):
            if self.scanning:
                return True
            if self.remote_urls is None:
                raise NeedRemoteUrls
            pattern = cond[len(_HASCONFIG_URL) :]
            from gitodb.refs.wildmatch import wildmatch  # here: only includeIf matches

            return any(wildmatch(pattern, url, pathname=True) for url in self.remote_urls)
        return False

    def _gitdir(self, pattern: str, source: str | None, icase: bool) -> bool:
        if self.git_dir is None:
            return False
        expanded = interpolate_path(pattern)
        pat = expanded if expanded is not None else pattern
        prefix = 0
        if pat.startswith("./"):
            if source is None:
                # Git prints the error and takes the condition as false.
                report("error", "relative config include conditionals must come from files")
                return False
            here = os.path.dirname(os.path.realpath(source))
            pat = here + pat[1:]
            prefix = len(here) + 1
        elif not os.path.isabs(pat):
            pat = "**/" + pat
        if pat.endswith("/"):
            pat += "**"
        from gitodb.refs.wildmatch import wildmatch

        for text in (os.path.realpath(self.git_dir), os.path.abspath(self.git_dir)):
            if prefix:
                # the including file's own directory matches literally
                head, want = text[:prefix], pat[:prefix]
                if len(text) < prefix or (head.lower() != want.lower() if icase else head != want):
                    continue
            if wildmatch(pat[prefix:], text[prefix:], pathname=True, casefold=icase):
                return True
        return False

    def _onbranch(self, pattern: str) -> bool:
        branch = self.head_branch() if self.head_branch is not None else None
        if branch is None:
            return False
        if pattern.endswith("/"):
            pattern += "**"
        from gitodb.refs.wildmatch import wildmatch

        return wildmatch(pattern, branch, pathname=True)


_GIT_PREFIX: list[str | None] = []  # git_prefix()'s answer, once found


def git_prefix() -> str | None:
    """The installation prefix of the ``git`` on ``PATH`` (``/usr`` for ``/usr/bin/git``)."""
    if not _GIT_PREFIX:
        _GIT_PREFIX.append(_find_git_prefix())
    return _GIT_PREFIX[0]


def _find_git_prefix() -> str | None:
    # shutil.which's search, without importing shutil (and the zlib, bz2 and lzma
    # modules it imports) in every command that reads the system config
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH") or os.defpath
        except (AttributeError, ValueError):
            path = os.defpath
    found = None
    for d in path.split(os.pathsep) if path else []:
        candidate = os.path.join(d, "git")
        if os.access(candidate, os.F_OK | os.X_OK) and not os.path.isdir(candidate):
            found = candidate
            break
    if found is None:
        return None
    return os.path.dirname(os.path.dirname(os.path.realpath(found)))


def interpolate_path(path: str) -> str | None:
    """Git's ``interpolate_path``: ``~/``, ``~user/`` and ``%(prefix)/``; None if impossible."""
    if path.startswith("%(prefix)/"):
        prefix = git_prefix()
        if prefix is None:
            return None
        return prefix + path[len("%(prefix)") :]
    if not path.startswith("~"):
        return path
    user, slash, rest = path[1:].partition("/")
    if not user:
        home = os.environ.get("HOME")
        if home is None:
            return None
    else:
        import pwd  # here: only a ~user path needs the password database

        try:
            home = pwd.getpwnam(user).pw_dir
        except KeyError:
            return None
    return home + slash + rest


def include_target(
    value: str | None, key: str, source: str | None, display: str | None
) -> tuple[str, str]:
    """``(path to open, path as Git names it)`` of an include's ``path`` value."""
    if value is None:
        raise ConfigError(f"missing value for '{key}'")
    expanded = interpolate_path(value)
    if expanded is None:
        raise ConfigError(f"could not expand include path '{value}'")
    if os.path.isabs(expanded):
        return expanded, expanded
    if source is None or display is None:
        raise ConfigError("relative config includes must come from files")
    # Git joins the text: ".git/config" + "../x" is ".git/../x" in its messages.
    return (
        os.path.join(os.path.dirname(source), expanded),
        os.path.join(os.path.dirname(display), expanded),
    )
