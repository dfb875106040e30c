"""``gitodb show-ref``: list refs, ``--verify`` names, ``--exists``, ``--exclude-existing``."""

from __future__ import annotations

import sys

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError
from gitodb.refs.base import refname_format_ok, refname_is_safe
from gitodb.refs.peel import peel_fully

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _set_hash(values: Any, value: str | None, unset: bool) -> None:
    values.hash = not unset
    if value is not None:
        values.hash_value = value


def _set_abbrev(values: Any, value: str | None, unset: bool) -> None:
    values.abbrev_set = not unset
    values.abbrev_value = "0" if unset else value


def _set_exclude(values: Any, value: str | None, unset: bool) -> None:
    values.exclude_existing = True
    values.exclude_pattern = value


PARSER = OptionParser(
    "show-ref",
    [
        "[--head] [-d | --dereference]\n"
        "[-s | --hash[=<n>]] [--abbrev[=<n>]] [--branches] [--tags]\n"
        "[--] [<pattern>...]",
        "--verify [-q | --quiet] [-d | --dereference]\n"
        "[-s | --hash[=<n>]] [--abbrev[=<n>]]\n"
        "[--] [<ref>...]",
        "--exclude-existing[=<pattern>]",
        "--exists <ref>",
    ],
    [
        Option(None, "tags", "bool", "only show tags (can be combined with --branches)"),
        Option(None, "branches", "bool", "only show branches (can be combined with --tags)"),
        Option(
            None, "heads", "bool", "deprecated synonym for --branches", dest="branches", hidden=True
        ),
        Option(None, "exists", "bool", "check for reference existence without resolving"),
        Option(None, "verify", "bool", "stricter reference checking, requires exact ref path"),
        Option(None, "head", "bool", "show the HEAD reference, even if it would be filtered out"),
        Option("d", "dereference", "bool", "dereference tags into object IDs"),
        Option(
            "s",
            "hash",
            "callback",
            "only show SHA1 hash using <n> digits",
            argh="n",
            takes_value=True,
            optional_value=True,
            callback=_set_hash,
        ),
        Option(
            None,
            "abbrev",
            "callback",
            "use <n> digits to display object names",
            argh="n",
            takes_value=True,
            optional_value=True,
            callback=_set_abbrev,
        ),
        Option("q", "quiet", "bool", "do not print results to stdout (useful with --verify)"),
        Option(
            None,
            "exclude-existing",
            "callback",
            "show refs from stdin that aren't in local repository",
            argh="pattern",
            takes_value=True,
            optional_value=True,
            negatable=False,
            callback=_set_exclude,
        ),
    ],
)


def _values() -> Any:
    values = PARSER.defaults()
    values.hash = False
    values.hash_value = None
    values.abbrev_set = False
    values.abbrev_value = None
    values.exclude_existing = False
    values.exclude_pattern = None
    return values


def _abbrev_value(opt: str, value: str, hexsz: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise OptionParser.error(f"option `{opt}' expects a numerical value") from None
    if n and n < 4:
        return 4
    return min(n, hexsz)


class _Shower:
    """Prints refs as ``show_one`` does: id (abbreviated), name, peeled line with ``-d``."""

    def __init__(
        self, repo: Any, *, quiet: bool, hash_only: bool, deref: bool, abbrev: int
    ) -> None:
        from gitodb.repo.abbrev import Abbreviator

        self.repo = repo
        self.quiet = quiet
        self.hash_only = hash_only
        self.deref = deref
        self.abbrev = Abbreviator(repo, abbrev)
        self.lines: list[bytes] = []

    def flush(self) -> None:
        sys.stdout.buffer.write(b"".join(self.lines))
        sys.stdout.flush()
        self.lines.clear()

    def show(self, name: str, oid: bytes, peeled: bytes | None = None) -> None:
        if not self.repo.odb.contains(oid):
            self.flush()
            raise GitodbError(f"git show-ref: bad ref {name} ({oid.hex()})")
        if self.quiet:
            return
        # Git prints names as C strings: a NUL (only in a damaged table) ends one.
        name = name.partition("\0")[0]
        hex_ = self.abbrev(oid)
        text = hex_ if self.hash_only else f"{hex_} {name}"
        self.lines.append(text.encode("utf-8", "surrogateescape") + b"\n")
        if not self.deref:
            return
        p = peeled
        if p is None and self.repo.odb.read_header(oid)[0] == "tag":
            p = peel_fully(self.repo.odb, oid, self.repo.object_format.hexsz)
        if p is not None:
            self.lines.append(
                f"{self.abbrev(p)} {name}^{{}}".encode("utf-8", "surrogateescape") + b"\n"
            )


def _tail_match(name: str, patterns: list[str]) -> bool:
    for p in patterns:
        if len(p) > len(name) or not name.endswith(p):
            continue
        if len(p) == len(name) or name[len(name) - len(p) - 1] == "/":
            return True
    return False


def _exclude_existing(repo: Any, pattern: str | None) -> int:
    existing = {r.name for r in repo.refs.iter_refs()}
    out = []
    for raw in sys.stdin.buffer.read().split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if not raw:
            continue
        if line.endswith("^{}"):
            line = line[:-3]
        k = len(line)
        while k > 0 and not line[k - 1].isspace():
            k -= 1
        ref = line[k:]
        if pattern is not None and not ref.startswith(pattern):
            continue
        if not refname_format_ok(ref):
            sys.stderr.write(f"warning: ref '{ref}' ignored\n")
            continue
        if ref not in existing:
            out.append(line.encode("utf-8", "surrogateescape") + b"\n")
    sys.stdout.buffer.write(b"".join(out))
    return 0


def run(argv: list[str], ctx: Any) -> int:  # noqa: C901 - one branch per mode, like Git's
    """Git's ``show-ref`` and its four modes."""
    opts, args = PARSER.parse(argv, _values())
    flags: dict[str, bool] = {
        name: getattr(opts, name)
        for name in ("tags", "branches", "exists", "verify", "head", "dereference", "quiet")
    }
    flags["hash"] = opts.hash
    hash_value: str | None = opts.hash_value
    abbrev_value: str | None = opts.abbrev_value
    abbrev_set: bool = opts.abbrev_set
    exclude: tuple[bool, str | None] = (opts.exclude_existing, opts.exclude_pattern)
    modes = [
        m
        for m, on in (
            ("--exclude-existing", exclude[0]),
            ("--verify", flags.get("verify")),
            ("--exists", flags.get("exists")),
        )
        if on
    ]
    if len(modes) > 1:
        raise GitodbError(f"options '{modes[0]}' and '{modes[1]}' cannot be used together")
    repo = ctx.open_repository()
    hexsz = repo.object_format.hexsz
    abbrev = 0
    if abbrev_set:
        from gitodb.repo.abbrev import default_abbrev

        abbrev = (
            default_abbrev(repo)
            if abbrev_value is None
            else _abbrev_value("abbrev", abbrev_value, hexsz)
        )
    if hash_value is not None:
        abbrev = _abbrev_value("hash", hash_value, hexsz)
    refs = repo.refs
    if exclude[0]:
        return _exclude_existing(repo, exclude[1])
    if flags.get("exists"):
        if not args:
            raise GitodbError("--exists requires a reference")
        if len(args) > 1:
            raise GitodbError("--exists requires exactly one reference")
        try:
            exists = refs.read(args[0]) is not None
        except GitodbError:
            exists = False
        if not exists:
            sys.stderr.write("error: reference does not exist\n")
            return 2
        return 0
    shower = _Shower(
        repo,
        quiet=flags.get("quiet", False),
        hash_only=flags.get("hash", False),
        deref=flags.get("dereference", False),
        abbrev=abbrev,
    )
    if flags.get("verify"):
        if not args:
            raise GitodbError("--verify requires a reference")
        for name in args:
            r = None
            if name.startswith("refs/") or refname_is_safe(name):
                try:
                    r = refs.resolve_ref(name)
                except GitodbError:
                    r = None
            if r is None or r[1] is None:
                shower.flush()
                if not shower.quiet:
                    raise GitodbError(f"'{name}' - not a valid ref")
                return 1
            ref = refs.read(r[0])
            shower.show(name, r[1], ref.peeled if ref is not None else None)
        shower.flush()
        return 0
    found = 0
    if flags.get("head"):
        head = refs.resolve("HEAD")
        if head is not None:
            shower.show("HEAD", head)
            found += 1
    prefixes = [
        p
        for p, on in (("refs/heads/", flags.get("branches")), ("refs/tags/", flags.get("tags")))
        if on
    ] or [""]
    if not args and not abbrev and not flags.get("dereference"):
        # every ref of the prefixes with its id: one native pass over the ref table
        from gitodb.repo.reflist import show_ref_table

        got = show_ref_table(repo, prefixes, hash_only=flags.get("hash", False))
        if got is not None:
            text, bad = got
            if not flags.get("quiet"):
                shower.flush()  # HEAD's line first
                sys.stdout.buffer.write(text)
            if bad is not None:
                sys.stdout.flush()
                raise GitodbError(f"git show-ref: bad ref {bad[0]} ({bad[1].hex()})")
            return 0 if found or text else 1
    for prefix in prefixes:
        for ref in refs.iter_refs(prefix):
            if args and not _tail_match(ref.name, args):
                continue
            oid = ref.oid if ref.target is None else refs.resolve(ref.name)
            if oid is None:
                continue
            shower.show(ref.name, oid, ref.peeled if ref.target is None else None)
            found += 1
    shower.flush()
    return 0 if found else 1
