"""Revision arguments as Git's ``setup_revisions`` reads them, added to a ``RevWalk``.

``RevisionArgs.add(arg)`` understands ``<rev>``, ``^<rev>``, ``A..B``, ``A...B``
(merge bases excluded), ``<rev>^@`` (its parents), ``<rev>^!`` (it, without its
parents); ``--not`` flips what follows.  The ref pseudo-options ``--all``,
``--branches[=<glob>]``, ``--tags[=<glob>]``, ``--remotes[=<glob>]``,
``--glob=<glob>`` add refs in name order, minus those matching the pending
``--exclude`` patterns (which the next of those options uses up);
``--exclude-hidden=<section>`` hides from the next of them the refs that
``transfer.hideRefs`` and ``<section>.hideRefs`` hide.  ``--alternate-refs`` adds
the tips of the alternates' repositories (``core.alternateRefsCommand``, else their
refs, under ``core.alternateRefsPrefixes`` if set).  ``--reflog`` adds every id
the reflogs hold.  In a ``-g`` walk (``RevWalk.walk_reflogs``) a commit named is a
reflog to walk, by the name given.
"""

from __future__ import annotations

import os

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError
from gitodb.history.graph import merge_bases
from gitodb.refs.table import RefRange, ref_range
from gitodb.repo.revparse import peel_to, resolve_full

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.history.revwalk import RevWalk
    from gitodb.repo import Repository

_GLOB_SPECIALS = "?*[\\"


class UnknownRevisionError(BadRevisionError):
    """An argument is neither a revision nor (as rev-list sees it) allowed as a path."""


def _wildmatch(pattern: str, name: str) -> bool:
    # Git's wildmatch without WM_PATHNAME: "*" also matches "/".
    import fnmatch  # (with re: only for a pattern)

    return fnmatch.fnmatchcase(name, pattern)


#: the sections ``--exclude-hidden=`` takes (Git 2.55)
HIDDEN_SECTIONS = ("fetch", "receive", "uploadpack")

#: Git's ``local_repo_env``: what a command run for another repository must not inherit
_LOCAL_REPO_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)


def hidden_ref_patterns(config: object, section: str) -> list[str]:
    """``transfer.hideRefs`` then ``<section>.hideRefs``, trailing slashes dropped."""
    get_all = config.get_all  # type: ignore[attr-defined]
    out = []
    for key in ("transfer.hiderefs", f"{section}.hiderefs"):
        for value in get_all(key):
            out.append(value.rstrip("/"))
    return out


def namespace_prefix() -> str:
    """Git's ``get_git_namespace``: ``GIT_NAMESPACE=a/b`` is
    ``refs/namespaces/a/refs/namespaces/b/``; "" without one."""
    names = [n for n in os.environ.get("GIT_NAMESPACE", "").split("/") if n]
    return "".join(f"refs/namespaces/{n}/" for n in names)


def ref_is_hidden(name: str, patterns: list[str]) -> bool:
    """Git's ``ref_is_hidden``: the last pattern that is the ref or a directory
    above it decides; ``!`` un-hides; ``^`` matches the full name, others the name
    inside ``GIT_NAMESPACE`` (a ref outside it matches none of those)."""
    prefix = namespace_prefix()
    stripped = name[len(prefix) :] if name.startswith(prefix) else None
    for pattern in reversed(patterns):
        negative = pattern.startswith("!")
        if negative:
            pattern = pattern[1:]
        subject: str | None = stripped
        if pattern.startswith("^"):
            pattern, subject = pattern[1:], name
        if (
            subject is not None
            and subject.startswith(pattern)
            and subject[len(pattern) : len(pattern) + 1] in ("", "/")
        ):
            return not negative
    return False


class RevisionArgs:
    """Feeds revision arguments into ``walk`` the way Git's command line does."""

    def __init__(self, repo: Repository, walk: RevWalk) -> None:
        self.repo = repo
        self.walk = walk
        self.negate = False
        self.excludes: list[str] = []
        self.hidden: list[str] | None = None  # --exclude-hidden's patterns, until used

    # -- refs ------------------------------------------------------------------
    def _refs(self, prefix: str) -> RefRange:
        """The refs under ``prefix`` (full names), sorted, symrefs resolved: from the
        store's ref table where it gives one (no ``Ref`` object per ref)."""
        return ref_range(self.repo.refs, prefix)

    def _add_ref(self, shown_name: str, full_name: str, oid: bytes) -> None:
        if self.excludes and any(_wildmatch(p, shown_name) for p in self.excludes):
            return
        if self.hidden is not None and ref_is_hidden(full_name, self.hidden):
            return
        self._add_object(oid, full_name, None)

    def _used(self) -> None:
        """A ref option used the pending exclusions up (Git's ``clear_ref_exclusions``)."""
        self.excludes = []
        self.hidden = None

    def all(self) -> None:
        """``--all``: every ref, then HEAD."""
        if not self.excludes and self.hidden is None and self.walk.reflog is None:
            # thousands of refs: no per-ref checks, one call
            self.walk.add_refs(self._refs("refs/"), uninteresting=self.negate)
        else:
            for name, oid in self._refs("refs/").items():
                self._add_ref(name, name, oid)
        head = self.repo.refs.resolve("HEAD")
        if head is not None:
            self._add_ref("HEAD", "HEAD", head)
        for name in other_worktree_heads(self.repo):
            tip = self.repo.refs.resolve(name)
            if tip is not None:
                self._add_ref(name, name, tip)
        self._used()

    def reflogs(self) -> None:
        """``--reflog``: every id every reflog holds, unnamed; an id that is gone is
        left out with Git's warning, once per reflog."""
        import sys

        from gitodb.history.reflogwalk import reflog_ids

        contains = self.repo.odb.contains
        warned: set[str] = set()
        for ref, oid in reflog_ids(self.repo):
            if contains(oid):
                self._add_object(oid, "", None)
            elif ref not in warned:
                warned.add(ref)
                sys.stderr.write(f"warning: reflog of '{ref}' references pruned commits\n")

    def bisect_refs(self) -> None:
        """``--bisect``: the bad bisection ref, and the good ones excluded (with the
        terms ``git bisect`` recorded in BISECT_TERMS, else bad and good)."""
        bad, good = "bad", "good"
        try:
            with open(os.path.join(self.repo.gitdir, "BISECT_TERMS"), encoding="utf-8") as f:
                terms = f.read().split("\n")
            if len(terms) >= 2 and terms[0] and terms[1]:
                bad, good = terms[0], terms[1]
        except OSError:
            pass
        for name, oid in self._refs(f"refs/bisect/{bad}").items():
            if name == f"refs/bisect/{bad}":
                self._add_object(oid, name, None)
        for name, oid in self._refs(f"refs/bisect/{good}-").items():
            self._add_object(oid, name, None, negative=True)

    def exclude_hidden(self, section: str) -> None:
        """``--exclude-hidden=<section>``: for the next ``--all`` or ``--glob``."""
        if section not in HIDDEN_SECTIONS:
            raise GitodbError(f"unsupported section for hidden refs: {section}")
        if self.hidden is not None:
            raise GitodbError("--exclude-hidden= passed more than once")
        self.hidden = hidden_ref_patterns(self.repo.config, section)

    def alternate_refs(self) -> None:
        """``--alternate-refs``: the tips of every alternate that is a repository."""
        for tip in alternate_tips(self.repo):
            self.walk.add(tip, uninteresting=self.negate, name="alternate")

    def refs_in(self, prefix: str, pattern: str | None = None) -> None:
        """``--branches``/``--tags``/``--remotes`` (``prefix`` refs/heads/ ...), maybe a glob."""
        if pattern is None:
            for name, oid in self._refs(prefix).items():
                self._add_ref(name[len(prefix) :], name, oid)
        else:
            self._glob(pattern, prefix)
        self._used()

    def glob(self, pattern: str) -> None:
        """``--glob=<pattern>``: refs matching it (``refs/`` implied)."""
        self._glob(pattern, None)
        self._used()

    def _glob(self, pattern: str, prefix: str | None) -> None:
        if prefix is None:
            full = pattern if pattern.startswith("refs/") else "refs/" + pattern
        else:
            full = prefix + pattern
        if not any(c in pattern for c in _GLOB_SPECIALS):
            full = (full if full.endswith("/") else full + "/") + "*"
        for name, oid in self._refs("refs/").items():
            if not _wildmatch(full, name):
                continue
            shown = name[len(prefix) :] if prefix and name.startswith(prefix) else name
            self._add_ref(shown, name, oid)

    def exclude(self, pattern: str) -> None:
        """``--exclude=<pattern>``: for the next ref option."""
        self.excludes.append(pattern)

    # -- revisions -------------------------------------------------------------
    def _add_object(
        self, oid: bytes, name: str, path: str | None, negative: bool = False, left: bool = False
    ) -> None:
        reflog = self.walk.reflog
        if reflog is not None and self.repo.odb.read_header(oid)[0] == "commit":
            # Git's add_pending_object_with_mode: a commit's reflog is walked instead
            if negative != self.negate:
                raise GitodbError(f"cannot walk reflogs for {name}")
            reflog.add(name)
            return
        self.walk.add(oid, uninteresting=negative != self.negate, name=name, path=path, left=left)

    def _resolve(self, name: str) -> tuple[bytes, str | None]:
        try:
            got = resolve_full(self.repo, name)
        except (BadRevisionError, ObjectNotFoundError):
            raise UnknownRevisionError(name) from None
        if not self.repo.odb.contains(got.oid):
            # A commit the commit-graph holds is known without its object, as in Git.
            graph = self.walk.graph
            if graph.file is None or graph.paranoid or graph.file.position(got.oid) is None:
                raise UnknownRevisionError(name)
        return got.oid, got.path

    def _commit_of(self, oid: bytes, name: str) -> bytes:
        try:
            return peel_to(self.repo, oid, "commit", name)
        except BadRevisionError:
            raise UnknownRevisionError(name) from None

    def add(self, arg: str) -> None:
        """Add one revision argument (``UnknownRevisionError`` if it names nothing)."""
        dots = arg.find("..")
        if dots >= 0:
            symmetric = arg[dots : dots + 3] == "..."
            left = arg[:dots] or "HEAD"
            right = arg[dots + (3 if symmetric else 2) :] or "HEAD"
            try:
                self._add_range(arg, left, right, symmetric)
                return
            except UnknownRevisionError:
                pass  # not a range after all: Git tries it as one name
        if arg.endswith("^@") and len(arg) > 2:
            oid = self._commit_of(self._resolve(arg[:-2])[0], arg)
            for parent in self.walk.graph.node(oid).parent_ids:
                self._add_object(parent, arg, None)
            return
        if arg.endswith("^!") and len(arg) > 2:
            oid, _path = self._resolve(arg[:-2])
            commit = self._commit_of(oid, arg)
            self._add_object(oid, arg[:-2], None)
            for parent in self.walk.graph.node(commit).parent_ids:
                self._add_object(parent, arg, None, negative=True)
            return
        negative = arg.startswith("^")
        name = arg[1:] if negative else arg
        oid, path = self._resolve(name)
        self._add_object(oid, name, path, negative)

    def _add_range(self, arg: str, left: str, right: str, symmetric: bool) -> None:
        a, _p = self._resolve(left)
        b, _q = self._resolve(right)
        if symmetric:
            ca = self.walk.graph.node(self._commit_of(a, arg))
            cb = self.walk.graph.node(self._commit_of(b, arg))
            for base in merge_bases(self.walk.graph, ca, [cb]):
                self._add_object(base.id, arg, None, negative=True)
            self._add_object(a, left, None, left=True)
        else:
            self._add_object(a, left, None, negative=True)
        self._add_object(b, right, None)


def other_worktree_heads(repo: Repository) -> list[str]:
    """The HEADs of the other worktrees, as ``--all`` adds them (Git's
    ``other_head_refs``): ``main-worktree/HEAD`` from a linked worktree, then each
    linked one's ``worktrees/<id>/HEAD`` in directory order, this one left out."""
    common = os.path.realpath(repo.commondir)
    current = os.path.realpath(repo.gitdir)
    out = [] if current == common else ["main-worktree/HEAD"]
    base = os.path.join(common, "worktrees")
    try:
        ids = os.listdir(base)
    except OSError:
        return out
    for wt in ids:
        path = os.path.join(base, wt)
        if os.path.realpath(path) == current or not os.path.isfile(os.path.join(path, "gitdir")):
            continue
        out.append(f"worktrees/{wt}/HEAD")
    return out


def alternate_tips(repo: Repository) -> list[bytes]:
    """The ids the alternates' repositories advertise (Git's ``for_each_alternate_ref``).

    Each alternate object directory named ``<repo>/objects`` whose ``<repo>/refs``
    is a directory is asked: ``core.alternateRefsCommand <repo>`` (through the
    shell, its output one id a line) if set, else its refs' ids in name order,
    only under the ``core.alternateRefsPrefixes`` (space-separated) if set.  A
    line that is no id ends that alternate's list with Git's warning.
    """
    import subprocess
    import sys

    from gitodb.repo import Repository as Repo

    config = repo.config
    command = config.get("core.alternaterefscommand")
    prefixes = (config.get("core.alternaterefsprefixes") or "").split()
    hexsz = repo.object_format.hexsz
    out: list[bytes] = []
    for d in repo.odb.dirs[1:]:
        path = os.path.realpath(d.path)
        if not path.endswith("/objects") or not os.path.isdir(path[:-8] + "/refs"):
            continue
        base = path[:-8]
        if command is None:
            alt = Repo(base)
            try:
                names = sorted(
                    (ref.name, ref.oid if ref.target is None else alt.refs.resolve(ref.name))
                    for ref in alt.refs.iter_refs("refs/")
                )
            finally:
                close = getattr(alt, "close", None)
                if close is not None:
                    close()
            out += [
                oid
                for name, oid in names
                if oid is not None and (not prefixes or any(name.startswith(p) for p in prefixes))
            ]
            continue
        env = {k: v for k, v in os.environ.items() if k not in _LOCAL_REPO_ENV}
        proc = subprocess.run(
            ["/bin/sh", "-c", command + ' "$@"', command, base],
            stdout=subprocess.PIPE,
            env=env,
            check=False,
        )
        for line in proc.stdout.split(b"\n")[:-1] if proc.stdout else []:
            text = line.decode("utf-8", "surrogateescape")
            try:
                if len(text) != hexsz:
                    raise ValueError(text)
                oid = bytes.fromhex(text)
            except ValueError:
                sys.stderr.write(f"warning: invalid line while parsing alternate refs: {text}\n")
                break
            out.append(oid)
    return out
