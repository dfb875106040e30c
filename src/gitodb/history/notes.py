"""Git notes as ``log`` shows them (``--notes``, ``%N``): which notes refs are shown,
and the notes of one commit.

A notes ref names a commit whose tree holds one blob per annotated object, named by
the object's hex id, possibly cut into fan-out directories of two hex digits
(``ab/cdef...``); other entries are not notes.  ``DisplayNotes`` follows Git's
``load_display_notes``: the default ref (``GIT_NOTES_REF``, else
``core.notesRef``, else ``refs/notes/commits``) and ``notes.displayRef`` (or
``GIT_NOTES_DISPLAY_REF``) unless ``--notes=<ref>`` was given without ``--notes``,
then each ``--notes=<ref>`` (a glob lists the refs it matches; a name that does
not resolve is Git's warning), each ref once.
``text(oid)`` is Git's ``format_display_notes``: for each ref with a note on the
object, ``Notes:`` (``Notes (<name>):`` for another ref than the default) and the
note's lines indented by four spaces after a blank line; ``raw`` (``%N``): the lines
alone.
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError, report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

DEFAULT_NOTES_REF = "refs/notes/commits"


def default_notes_ref(repo: Repository) -> str:
    """Git's ``default_notes_ref``: ``GIT_NOTES_REF``, ``core.notesRef``, or
    ``refs/notes/commits``."""
    return os.environ.get("GIT_NOTES_REF") or repo.config.get("core.notesref") or DEFAULT_NOTES_REF


def expand_notes_ref(name: str) -> str:
    """Git's ``expand_notes_ref``: ``foo`` and ``notes/foo`` are ``refs/notes/foo``."""
    if name.startswith("refs/notes/"):
        return name
    if name.startswith("notes/"):
        return "refs/" + name
    return "refs/notes/" + name


class NotesOptions:
    """The notes options of a command line, as Git's revision options keep them:
    ``show`` (None: not given, the command's default applies), ``use_default``
    (Git's ``use_default_notes``; None for its -1) and the ``--notes=<ref>`` refs."""

    def __init__(self) -> None:
        self.show: bool | None = None
        self.use_default: bool | None = None
        self.extra: list[str] = []

    def notes(self, ref: str | None) -> None:
        """``--notes`` (the default refs) or ``--notes=<ref>`` (that ref; the default
        ones only if ``--notes`` is given too)."""
        self.show = True
        if ref is None:
            self.use_default = True
        else:
            self.extra.append(ref)

    def show_notes(self, ref: str | None) -> None:
        """``--show-notes[=<ref>]``, the old spelling: with a ref, the default refs too."""
        if ref is not None and self.use_default is None:
            self.use_default = True
        self.notes(ref)

    def no_notes(self) -> None:
        """``--no-notes``: nothing shown, until a later ``--notes``."""
        self.show, self.use_default, self.extra = False, None, []

    def standard(self, on: bool) -> None:
        """``--[no-]standard-notes``: whether the default refs are among those shown;
        ``--standard-notes`` counts as a notes option given, without showing any."""
        if on and self.show is None:
            self.show = False
        self.use_default = on

    def take(self, arg: str) -> bool:
        """Apply ``arg`` if it is one of the options above (False if not)."""
        name, eq, value = arg.partition("=")
        if name in ("--notes", "--show-notes"):
            (self.notes if name == "--notes" else self.show_notes)(value if eq else None)
        elif arg == "--no-notes":
            self.no_notes()
        elif arg in ("--standard-notes", "--no-standard-notes"):
            self.standard(arg == "--standard-notes")
        else:
            return False
        return True

    def display(self, repo: Repository, shown_by_default: bool) -> DisplayNotes | None:
        """The notes to show, or None (``shown_by_default``: the command's default
        when no notes option was given)."""
        show = shown_by_default if self.show is None else self.show
        return DisplayNotes(repo, self.use_default, self.extra) if show else None


class DisplayNotes:
    """The notes refs ``log`` shows, loaded once (see the module docstring).

    ``use_default`` and ``extra`` are ``NotesOptions``' ``use_default`` (True: the
    default refs, False: not them, None: them only when no ``--notes=<ref>`` was
    given) and ``--notes=<ref>`` arguments, in order.
    """

    def __init__(self, repo: Repository, use_default: bool | None, extra: list[str]) -> None:
        self.repo = repo
        names: list[str] = []
        if use_default or (use_default is None and not extra):
            names.append(default_notes_ref(repo))
            env = os.environ.get("GIT_NOTES_DISPLAY_REF")
            patterns = (
                env.split(":") if env is not None else repo.config.get_all("notes.displayref")
            )
            for pattern in patterns:
                self._add(names, pattern)
        for ref in extra:
            self._add(names, expand_notes_ref(ref))
        #: (ref, notes by annotated id) of each ref that has notes, in display order
        self.trees = [(name, notes) for name in names if (notes := self._load(name))]

    def _add(self, names: list[str], pattern: str) -> None:
        """Git's ``string_list_add_refs_by_glob``: a glob adds the refs it matches."""
        if not pattern:
            return
        if any(c in pattern for c in "*?["):  # Git's has_glob_specials
            from gitodb.objects.wildmatch import wildmatch  # (imports re: only here)

            refs = self.repo.refs.iter_refs("refs/")
            matches = [r.name for r in refs if wildmatch(pattern, r.name)]
        else:
            matches = [pattern]
            try:
                self.repo.resolve(pattern)
            except GitodbError:
                report("warning", f"notes ref {pattern} is invalid")
        for name in matches:
            if name not in names:
                names.append(name)

    def _load(self, ref: str) -> dict[bytes, bytes]:
        """The notes of ``ref`` by annotated id (nothing if the ref is missing)."""
        try:
            tree = self.repo.tree(ref)
        except GitodbError:
            return {}
        rawsz = self.repo.object_format.rawsz
        notes: dict[bytes, bytes] = {}
        todo = [(tree, b"")]
        while todo:
            t, prefix = todo.pop()
            for entry in t:
                name = prefix + entry.name
                if entry.object_type == "tree" and len(entry.name) == 2 and _hex(entry.name):
                    if len(name) < 2 * rawsz:
                        todo.append((self.repo.odb.tree(entry.id), name))
                elif entry.object_type == "blob" and len(name) == 2 * rawsz and _hex(name):
                    notes[bytes.fromhex(name.decode())] = entry.id
        return notes

    def __bool__(self) -> bool:
        return bool(self.trees)

    def text(self, oid: bytes, raw: bool = False) -> bytes:
        """Git's ``format_display_notes`` for ``oid`` (``b""``: no note)."""
        out: list[bytes] = []
        for ref, notes in self.trees:
            blob = notes.get(oid)
            if blob is None:
                continue
            kind, data = self.repo.odb.read(blob)
            if kind != "blob":
                continue
            msg = bytes(data)
            if msg.endswith(b"\n"):
                msg = msg[:-1]
            if not raw:
                name = ref.removeprefix("refs/").removeprefix("notes/")
                heading = b"Notes:" if ref == DEFAULT_NOTES_REF else b"Notes (%s):" % name.encode()
                out.append(b"\n" + heading + b"\n")
            for line in msg.split(b"\n") if msg else []:
                out.append((b"" if raw else b"    ") + line + b"\n")
        return b"".join(out)


def _hex(name: bytes) -> bool:
    return all(c in b"0123456789abcdef" for c in name)
