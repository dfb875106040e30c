"""Git's fsck of one object, with its message ids and their severities.

Every problem has a message id (``missingEmail``, ``treeNotSorted``, ...) with a
default severity: fatal, error, warn, info (printed as a warning) or ignore.
``FsckSeverities`` holds the defaults (``strict`` turns warnings into errors, as
``index-pack`` runs fsck) and the changes a user asked for, parsed from Git's
``<id>=<severity>[,<id>=<severity>...]`` (``index-pack --strict=``,
``--fsck-objects=``) or from configuration (``fsck.<id>``, ``fetch.fsck.<id>``,
``receive.fsck.<id>``).  A fatal id cannot be demoted.

``Fsck.check(type_name, data, oid)`` runs Git's checks of a commit, tag or tree
(``fsck_commit``, ``fsck_tag_standalone``, ``fsck_tree``), reports each problem
as Git prints it (``error: object <id>: <msgId>: <text>``, ``warning: ...``)
and returns whether an error was reported.  Trees also queue the
``.gitattributes`` and ``.gitmodules`` blobs they name: ``check_blob`` checks a
queued ``.gitattributes`` blob's size and line lengths, and a ``.gitmodules``
blob's submodule names, URLs, paths and update settings
(``gitodb.objects.submodule_rules``), parsed by the config reader the caller
gives.  ``skiplist=<file>`` (``fsck.skipList``) names objects never reported.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable

from gitodb.errors import GitodbError
from gitodb.objects.dotnames import (
    is_dotgit,
    is_dotgitattributes,
    is_dotgitignore,
    is_dotgitmodules,
    is_dotmailmap,
)
from gitodb.objects.format import ObjectFormat
from gitodb.objects.submodule_rules import gitmodules_problems

FATAL, ERROR, WARN, INFO, IGNORE = "fatal", "error", "warn", "info", "ignore"

#: Git 2.55's fsck message ids (fsck.h) and their default severities
DEFAULTS: dict[str, str] = {
    "nulInHeader": FATAL,
    "unterminatedHeader": FATAL,
    **dict.fromkeys(
        (
            "badDate badDateOverflow badEmail badGpgsig badHeadTarget badName badObjectSha1 "
            "badPackedRefEntry badPackedRefHeader badParentSha1 badRefContent badRefFiletype "
            "badRefName badRefOid badReferentName badTimezone badTree badTreeSha1 "
            "badType duplicateEntries missingAuthor missingCommitter missingEmail "
            "missingNameBeforeEmail missingObject missingSpaceBeforeDate "
            "missingSpaceBeforeEmail missingTag missingTagEntry missingTree missingType "
            "missingTypeEntry multipleAuthors packedRefEntryNotTerminated packedRefUnsorted "
            "treeNotSorted unknownType zeroPaddedDate gitmodulesMissing gitmodulesBlob "
            "gitmodulesLarge gitmodulesName gitmodulesSymlink gitmodulesUrl gitmodulesPath "
            "gitmodulesUpdate gitattributesMissing gitattributesLarge gitattributesLineLength "
            "gitattributesBlob"
        ).split(),
        ERROR,
    ),
    **dict.fromkeys(
        (
            "badReftableTableName emptyName fullPathname hasDot hasDotdot hasDotgit "
            "largePathname nullSha1 nulInCommit zeroPaddedFilemode"
        ).split(),
        WARN,
    ),
    **dict.fromkeys(
        (
            "badFilemode badTagName emptyPackedRefsFile gitattributesSymlink gitignoreSymlink "
            "gitmodulesParse mailmapSymlink missingTaggerEntry refMissingNewline symlinkRef "
            "symrefTargetIsNotARef trailingRefContent"
        ).split(),
        INFO,
    ),
    "extraHeaderEntry": IGNORE,
}
_BY_LOWER = {k.lower(): k for k in DEFAULTS}
_SEVERITY_WORDS = (ERROR, WARN, IGNORE)

# Git's limits on .gitattributes blobs and path lengths (attr.h, fsck.c)
ATTR_MAX_FILE_SIZE = 100 * 1024 * 1024
ATTR_MAX_LINE_LENGTH = 2048
MAX_PATHNAME = 4096
_LONG_LINE = re.compile(rb"[^\n]{%d}" % ATTR_MAX_LINE_LENGTH)
_GOOD_MODES = {0o100755, 0o100644, 0o120000, 0o040000, 0o160000}


class FsckConfigError(GitodbError):
    """A severity setting Git dies on (unknown id or severity, demoting a fatal one)."""


class FsckSeverities:
    """The severity of every message id for one run."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._set: dict[str, str] = {}
        #: a tree entry name longer than this is ``largePathname`` (``fsck.largePathname``
        #: takes it after the severity: ``warn:<length>``)
        self.max_pathname = MAX_PATHNAME
        #: objects whose problems are not reported (``skiplist=<file>``, ``fsck.skipList``)
        self.skip: set[bytes] = set()

    def read_skiplist(self, path: str) -> None:
        """Git's ``oidset_parse_file``: one object id per line; ``#`` starts a comment,
        blanks around and empty lines are allowed.  Raises ``FsckConfigError``
        (``could not open object name list``, ``invalid object name``)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            raise FsckConfigError(f"could not open object name list: {path}") from None
        for line in data.split(b"\n"):
            text = line.split(b"#", 1)[0].strip(b" \t\n\v\f\r")
            if not text:
                continue
            if not re.fullmatch(rb"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}", text):
                raise FsckConfigError(
                    f"invalid object name: {text.decode('utf-8', 'surrogateescape')}"
                )
            self.skip.add(bytes.fromhex(text.decode()))

    def of(self, msg_id: str) -> str:
        """The severity ``msg_id`` is reported with (before info becomes a warning)."""
        got = self._set.get(msg_id)
        if got is not None:
            return got
        default = DEFAULTS[msg_id]
        return ERROR if self.strict and default == WARN else default

    def set(self, msg_id: str, severity: str) -> None:
        """Git's ``fsck_set_msg_type``: ``msg_id`` (any case) reports at ``severity``;
        for ``largePathname``, ``<severity>:<length>`` also sets the length."""
        if msg_id.lower() == "largepathname" and ":" in severity:
            severity, length = severity.split(":", 1)
            self.max_pathname = _parse_length(length)
        if severity not in _SEVERITY_WORDS:
            raise FsckConfigError(f"Unknown fsck message type: '{severity}'")
        name = _BY_LOWER.get(msg_id.lower())
        if name is None:
            raise FsckConfigError(f"Unhandled message id: {msg_id}")
        if DEFAULTS[name] == FATAL and severity != ERROR:
            raise FsckConfigError(f"Cannot demote {msg_id} to {severity}")
        self._set[name] = severity

    def parse(self, values: str) -> None:
        """Git's ``fsck_set_msg_types``: ``id=sev`` (or ``id:sev``) items split by
        space, comma or ``|``; the id is case-insensitive."""
        for item in re.split(r"[ ,|]", values):
            if not item:
                continue
            m = re.match(r"[^=:]*", item)
            assert m is not None
            key = m.group(0).lower()
            if key == "skiplist":
                if m.end() == len(item):
                    raise FsckConfigError("skiplist requires a path")
                self.read_skiplist(item[m.end() + 1 :])
                continue
            if m.end() == len(item):
                raise FsckConfigError(f"Missing '=': '{item.lower()}'")
            self.set(key, item[m.end() + 1 :])

    def apply_config(self, config: object, prefix: str) -> None:
        """Take ``<prefix><id>`` settings (``fsck.``, ``fetch.fsck.``, ``receive.fsck.``)."""
        keys: Callable[[str], list[str]] = config.keys  # type: ignore[attr-defined]
        for key in keys(prefix):
            name = key[len(prefix) :]
            if "." in name:
                continue
            value = config.get(key)  # type: ignore[attr-defined]
            if value is None:
                continue
            if name == "skiplist":  # a path, "~/" expanded as Git's pathname values are
                self.read_skiplist(os.path.expanduser(value))
            else:
                self.set(name, value)


def _parse_length(text: str) -> int:
    """Git's ``git_parse_ssize_t`` for ``fsck.largePathname``'s length: C's base-0
    integer and an optional k, m or g unit."""
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgG]?)", text)
    if m is None:
        raise FsckConfigError(f"unable to parse max tree entry len: {text}")
    digits = m[2]
    base = 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10
    n = int(digits, base) << {"": 0, "k": 10, "m": 20, "g": 30}[m[3].lower()]
    return -n if m[1] == "-" else n


Reporter = Callable[[str], None]
#: reads a ``.gitmodules`` blob: ``(key, value)`` entries in order, None if unparsable
GitmodulesParser = Callable[[bytes], "list[tuple[str, str | None]] | None"]


def _stderr(line: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(line + "\n")


class Fsck:
    """Git's fsck of single objects, for one run (it keeps the queued special blobs)."""

    def __init__(
        self,
        fmt: ObjectFormat,
        severities: FsckSeverities | None = None,
        reporter: Reporter = _stderr,
        refname_ok: Callable[[str], bool] | None = None,
        gitmodules_parser: GitmodulesParser | None = None,
    ) -> None:
        """``refname_ok`` checks ``refs/tags/<name>`` of a tag (none: tag names pass);
        ``gitmodules_parser`` reads a ``.gitmodules`` blob as Git's config parser does
        (``(key, value)`` entries in order, None when it cannot be parsed; none: such
        blobs are not parsed)."""
        self.fmt = fmt
        self.refname_ok = refname_ok
        self.gitmodules_parser = gitmodules_parser
        self.severities = severities or FsckSeverities()
        self.reporter = reporter
        self.gitattributes_found: set[bytes] = set()
        self.gitmodules_found: set[bytes] = set()
        self.blobs_done: set[bytes] = set()

    # ----------------------------------------------------------- reporting
    def report(self, oid: bytes, msg_id: str, text: str) -> bool:
        """Report one problem; True when it counts as an error (Git's ``report``)."""
        severity = self.severities.of(msg_id)
        if severity == IGNORE or oid in self.severities.skip:
            return False
        if severity == FATAL:
            severity = ERROR
        elif severity == INFO:
            severity = WARN
        word = "error" if severity == ERROR else "warning"
        self.reporter(f"{word}: object {oid.hex()}: {msg_id}: {text}")
        return severity == ERROR

    # ----------------------------------------------------------- objects
    def check(self, type_name: str, data: bytes, oid: bytes) -> bool:
        """Check one object; True when an error was reported."""
        if type_name == "commit":
            return self._commit(data, oid)
        if type_name == "tag":
            return self._tag(data, oid)
        if type_name == "tree":
            return self._tree(data, oid)
        if type_name == "blob":
            return self.check_blob(data, oid)
        return False

    def _verify_headers(self, data: bytes, oid: bytes) -> bool:
        nul = data.find(b"\0")
        end = data.find(b"\n\n")
        if nul >= 0 and (end < 0 or nul < end):
            return self.report(oid, "nulInHeader", f"unterminated header: NUL at offset {nul}")
        if end >= 0 or data.endswith(b"\n"):
            return False
        return self.report(oid, "unterminatedHeader", "unterminated header")

    def _hex_line(self, data: bytes, pos: int) -> tuple[bool, int]:
        """Git's ``parse_oid_hex`` then ``*p == '\\n'``: (good, position after the line)."""
        hexsz = self.fmt.hexsz
        text = data[pos : pos + hexsz]
        good = (
            len(text) == hexsz
            and not text.strip(b"0123456789abcdef")
            and data[pos + hexsz : pos + hexsz + 1] == b"\n"
        )
        if good:
            return True, pos + hexsz + 1
        # Git goes on after the hex it could parse: to the end of the line is close
        # enough for the checks that follow (they look for the next header)
        nl = data.find(b"\n", pos)
        return False, (nl + 1 if nl >= 0 else len(data))

    def _commit(self, data: bytes, oid: bytes) -> bool:
        if self._verify_headers(data, oid):
            return True
        if not data.startswith(b"tree "):
            return self.report(oid, "missingTree", "invalid format - expected 'tree' line")
        good, pos = self._hex_line(data, 5)
        if not good and self.report(oid, "badTreeSha1", "invalid 'tree' line format - bad sha1"):
            return True
        while data.startswith(b"parent ", pos):
            good, pos = self._hex_line(data, pos + 7)
            if not good and self.report(
                oid, "badParentSha1", "invalid 'parent' line format - bad sha1"
            ):
                return True
        authors = 0
        while data.startswith(b"author ", pos):
            authors += 1
            bad, pos = self._ident(data, pos + 7, oid)
            if bad:
                return True
        if authors < 1:
            err = self.report(oid, "missingAuthor", "invalid format - expected 'author' line")
        elif authors > 1:
            err = self.report(oid, "multipleAuthors", "invalid format - multiple 'author' lines")
        else:
            err = False
        if err:
            return True
        if not data.startswith(b"committer ", pos):
            return self.report(
                oid, "missingCommitter", "invalid format - expected 'committer' line"
            )
        bad, pos = self._ident(data, pos + 10, oid)
        if bad:
            return True
        if b"\0" in data:
            return self.report(oid, "nulInCommit", "NUL byte in the commit object body")
        return False

    def _ident(self, data: bytes, p: int, oid: bytes) -> tuple[bool, int]:
        """Git's ``fsck_ident`` on the line at ``p``: (error reported, next line)."""
        nl = data.find(b"\n", p)
        after = nl + 1 if nl >= 0 else len(data)
        line = data[p : nl if nl >= 0 else len(data)]
        prefix = "invalid author/committer line - "

        def bad(msg_id: str, what: str) -> tuple[bool, int]:
            return self.report(oid, msg_id, prefix + what), after

        if line.startswith(b"<"):
            return bad("missingNameBeforeEmail", "missing space before email")
        lt = gt = -1
        for i, c in enumerate(line):
            if c == 0x3E:  # '>'
                gt = i
                break
            if c == 0x3C:  # '<'
                lt = i
                break
        if lt < 0 and gt < 0:
            return bad("missingEmail", "missing email")
        if gt >= 0:
            return bad("badName", "bad name")
        if line[lt - 1 : lt] != b" ":
            return bad("missingSpaceBeforeEmail", "missing space before email")
        end = lt + 1
        while True:
            if end >= len(line) or line[end] == 0x3C:
                return bad("badEmail", "bad email")
            if line[end] == 0x3E:
                break
            end += 1
        q = end + 1
        if line[q : q + 1] != b" ":
            return bad("missingSpaceBeforeDate", "missing space before date")
        q += 1
        if line[q : q + 1] == b"0" and line[q + 1 : q + 2] != b" ":
            return bad("zeroPaddedDate", "zero-padded date")
        # strtoumax: blanks, a sign, digits; a negative number wraps around
        m = re.match(rb"[ \t\n\v\f\r]*([-+]?)([0-9]*)", line[q:])
        assert m is not None
        sign, number = m.group(1), m.group(2)
        if number and (sign == b"-" and int(number) != 0 or int(number) >= 1 << 63):
            return bad("badDateOverflow", "date causes integer overflow")
        dend = q + m.end()
        if not number or line[dend : dend + 1] != b" ":
            return bad("badDate", "bad date")
        tz = line[dend + 1 :]
        if not re.fullmatch(rb"[-+][0-9]{4}", tz) or nl < 0:
            return bad("badTimezone", "bad time zone")
        return False, after

    def _tag(self, data: bytes, oid: bytes) -> bool:
        if self._verify_headers(data, oid):
            return True
        if not data.startswith(b"object "):
            return self.report(oid, "missingObject", "invalid format - expected 'object' line")
        good, pos = self._hex_line(data, 7)
        if not good and self.report(
            oid, "badObjectSha1", "invalid 'object' line format - bad sha1"
        ):
            return True
        if not data.startswith(b"type ", pos):
            return self.report(oid, "missingTypeEntry", "invalid format - expected 'type' line")
        eol = data.find(b"\n", pos + 5)
        if eol < 0:
            return self.report(
                oid, "missingType", "invalid format - unexpected end after 'type' line"
            )
        if data[pos + 5 : eol] not in (b"blob", b"tree", b"commit", b"tag") and self.report(
            oid, "badType", "invalid 'type' value"
        ):
            return True
        pos = eol + 1
        if not data.startswith(b"tag ", pos):
            return self.report(oid, "missingTagEntry", "invalid format - expected 'tag' line")
        eol = data.find(b"\n", pos + 4)
        if eol < 0:
            return self.report(
                oid, "missingTag", "invalid format - unexpected end after 'type' line"
            )
        name = data[pos + 4 : eol]
        if not self._good_tag_name(name) and self.report(
            oid, "badTagName", f"invalid 'tag' name: {name.decode('utf-8', 'replace')}"
        ):
            return True
        pos = eol + 1
        bad = False
        if not data.startswith(b"tagger ", pos):
            # early tags have no tagger line
            if self.report(oid, "missingTaggerEntry", "invalid format - expected 'tagger' line"):
                return True
        else:
            # Git goes on after a bad tagger line: what follows is checked too
            bad, pos = self._ident(data, pos + 7, oid)
        if pos >= len(data) or data[pos : pos + 1] == b"\0":
            return bad
        if data[pos : pos + 1] != b"\n":
            return self.report(
                oid, "extraHeaderEntry", "invalid format - extra header(s) after 'tagger'"
            )
        return bad

    def _good_tag_name(self, name: bytes) -> bool:
        if self.refname_ok is None:
            return True
        return self.refname_ok("refs/tags/" + name.decode("utf-8", "surrogateescape"))

    def _tree(self, data: bytes, oid: bytes) -> bool:
        rawsz = self.fmt.rawsz
        found: set[str] = set()
        err = False
        pos, n = 0, len(data)
        prev_name: bytes | None = None
        prev_mode = 0
        while pos < n:
            space = data.find(b" ", pos, n)
            nul = data.find(b"\0", space + 1 if space >= 0 else pos, n)
            if space < 0 or nul < 0 or nul + 1 + rawsz > n or nul == space + 1:
                # too short, a mode that is not octal, or an empty name
                return self.report(oid, "badTree", "cannot be parsed as a tree") or err
            mode_text = data[pos:space]
            if mode_text.strip(b"01234567"):
                return self.report(oid, "badTree", "cannot be parsed as a tree") or err
            mode = int(mode_text or b"0", 8)
            name = data[space + 1 : nul]
            entry = data[nul + 1 : nul + 1 + rawsz]
            pos = nul + 1 + rawsz
            if not name:
                found.add("emptyName")
            if b"/" in name:
                found.add("fullPathname")
            if name == b".":
                found.add("hasDot")
            if name == b"..":
                found.add("hasDotdot")
            if is_dotgit(name):
                found.add("hasDotgit")
            if len(name) > self.severities.max_pathname:
                found.add("largePathname")
            if entry == bytes(rawsz):
                found.add("nullSha1")
            if mode_text.startswith(b"0"):
                found.add("zeroPaddedFilemode")
            # 100664 was written by early Gits: bad only when strict
            if mode not in _GOOD_MODES and (mode != 0o100664 or self.severities.strict):
                found.add("badFilemode")
            # the names HFS+ and NTFS read as these files count too
            link = mode & 0o170000 == 0o120000
            if is_dotgitmodules(name):
                if link:
                    err |= self.report(oid, "gitmodulesSymlink", ".gitmodules is a symbolic link")
                else:
                    self.gitmodules_found.add(entry)
            if is_dotgitattributes(name):
                if link:
                    err |= self.report(oid, "gitattributesSymlink", ".gitattributes is a symlink")
                else:
                    self.gitattributes_found.add(entry)
            if link and is_dotgitignore(name):
                err |= self.report(oid, "gitignoreSymlink", ".gitignore is a symlink")
            if link and is_dotmailmap(name):
                err |= self.report(oid, "mailmapSymlink", ".mailmap is a symlink")
            if prev_name is not None:
                order = _tree_order(prev_name, prev_mode, name, mode)
                if order < 0:
                    found.add("treeNotSorted")
                elif order == 0:
                    found.add("duplicateEntries")
            prev_name, prev_mode = name, mode
        # Git reports each kind of problem once per tree, in this order
        for msg_id, text in _TREE_MESSAGES:
            if msg_id in found:
                err |= self.report(oid, msg_id, text)
        return err

    def check_blob(self, data: bytes | None, oid: bytes) -> bool:
        """Check a blob a tree named ``.gitmodules`` or ``.gitattributes`` (others
        need no check); ``data`` None: too large to be read."""
        if oid in self.severities.skip:
            return False
        err = False
        if oid in self.gitmodules_found:
            self.blobs_done.add(oid)
            err |= self._check_gitmodules(data, oid)
        if oid not in self.gitattributes_found:
            return err
        if data is None:
            return err
        self.blobs_done.add(oid)
        if len(data) > ATTR_MAX_FILE_SIZE:
            return (
                self.report(oid, "gitattributesLarge", ".gitattributes too large to parse") or err
            )
        text = data.split(b"\0", 1)[0]
        if _LONG_LINE.search(text):
            return (
                self.report(
                    oid, "gitattributesLineLength", ".gitattributes has too long lines to parse"
                )
                or err
            )
        return err

    def _check_gitmodules(self, data: bytes | None, oid: bytes) -> bool:
        """Git's ``fsck_blob`` for ``.gitmodules``: the blob parses as config, and its
        submodule names, URLs, paths and update settings are safe."""
        if data is None:
            return self.report(oid, "gitmodulesLarge", ".gitmodules too large to parse")
        if self.gitmodules_parser is None:
            return False
        entries = self.gitmodules_parser(data)
        if entries is None:
            return self.report(oid, "gitmodulesParse", "could not parse gitmodules blob")
        err = False
        for msg_id, text in gitmodules_problems(entries):
            err |= self.report(oid, msg_id, text)
        return err

    def pending_blobs(self) -> Iterable[tuple[bytes, str]]:
        """The queued special blobs not checked yet: (id, ``.gitattributes``/``.gitmodules``)."""
        for oid in sorted(self.gitmodules_found - self.blobs_done):
            yield oid, ".gitmodules"
        for oid in sorted(self.gitattributes_found - self.blobs_done):
            yield oid, ".gitattributes"

    def finish(self, read_blob: Callable[[bytes], tuple[str, bytes] | None] | None) -> bool:
        """Git's ``fsck_finish``: check the queued blobs not seen, read through
        ``read_blob`` (None outside a repository: Git refuses then)."""
        err = False
        for oid, what in self.pending_blobs():
            if read_blob is None:
                raise GitodbError("cannot perform queued object checks outside of a repository")
            got = read_blob(oid)
            kind = "gitattributes" if what == ".gitattributes" else "gitmodules"
            if got is None:
                err |= self.report(oid, f"{kind}Missing", f"unable to read {what} blob")
                continue
            if got[0] != "blob":
                err |= self.report(oid, f"{kind}Blob", f"non-blob found at {what}")
                continue
            err |= self.check_blob(got[1], oid)
            self.blobs_done.add(oid)
        return err


_TREE_MESSAGES = (
    ("nullSha1", "contains entries pointing to null sha1"),
    ("fullPathname", "contains full pathnames"),
    ("emptyName", "contains empty pathname"),
    ("hasDot", "contains '.'"),
    ("hasDotdot", "contains '..'"),
    ("hasDotgit", "contains '.git'"),
    ("zeroPaddedFilemode", "contains zero-padded file modes"),
    ("badFilemode", "contains bad file modes"),
    ("duplicateEntries", "contains duplicate file entries"),
    ("treeNotSorted", "not properly sorted"),
    ("largePathname", "contains excessively large pathname"),
)


def _tree_order(a: bytes, a_mode: int, b: bytes, b_mode: int) -> int:
    """Git's ``verify_ordered``: negative when out of order, 0 for a duplicate name."""
    if a == b:
        return 0
    ka = a + b"/" if a_mode & 0o170000 == 0o040000 else a
    kb = b + b"/" if b_mode & 0o170000 == 0o040000 else b
    if ka < kb:
        # a file "x" before a directory "x" is still a duplicate name
        return 1
    return -1
