"""The files ref backend: loose refs under ``refs/``, ``packed-refs``, reflogs in ``logs/``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gitodb.errors import RefError
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import Ref, RefStore


def _parse_ref_value(name: str, text: bytes, fmt: ObjectFormat, path: Path) -> Ref:
    if text.startswith(b"ref:"):
        return Ref(name, target=text[4:].strip().decode("utf-8", "surrogateescape"))
    hex_id = text.strip()
    if len(hex_id) < fmt.hexsz:
        raise RefError(f"cannot lock ref '{name}': invalid ref content", path=path)
    try:
        return Ref(name, oid=bytes.fromhex(hex_id[: fmt.hexsz].decode("ascii")))
    except ValueError:
        raise RefError(f"invalid ref content in '{name}'", path=path) from None


class FilesRefStore(RefStore):
    """Loose refs override ``packed-refs``; names are paths below the git directory."""

    def __init__(self, git_dir: str | os.PathLike[str], fmt: ObjectFormat) -> None:
        self.git_dir = Path(git_dir)
        self.fmt = fmt

    # -- packed-refs -------------------------------------------------------
    def _packed(self) -> dict[str, Ref]:
        path = self.git_dir / "packed-refs"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        refs: dict[str, Ref] = {}
        last: str | None = None
        offset = 0
        for line in data.splitlines(keepends=True):
            text = line.rstrip(b"\n")
            if not text or text.startswith(b"#"):
                pass
            elif text.startswith(b"^"):
                if last is None:
                    raise RefError("packed-refs: peeled line without a ref", path=path,
                                   offset=offset)
                prev = refs[last]
                refs[last] = Ref(prev.name, oid=prev.oid,
                                 peeled=bytes.fromhex(text[1:].decode("ascii")))
            else:
                hex_id, sp, name_b = text.partition(b" ")
                if not sp or len(hex_id) != self.fmt.hexsz:
                    raise RefError("unexpected line in packed-refs", path=path, offset=offset)
                last = name_b.decode("utf-8", "surrogateescape")
                refs[last] = Ref(last, oid=bytes.fromhex(hex_id.decode("ascii")))
            offset += len(line)
        return refs

    # -- reading -----------------------------------------------------------
    def _read_loose(self, name: str) -> Ref | None:
        path = self.git_dir / name
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        return _parse_ref_value(name, data, self.fmt, path)

    def read(self, name: str) -> Ref | None:
        """Return ``name`` from its loose file, else from ``packed-refs``."""
        if ".." in name.split("/") or name.startswith("/"):
            return None
        ref = self._read_loose(name)
        if ref is not None:
            return ref
        if name.startswith("refs/"):
            return self._packed().get(name)
        return None

    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        """All refs under ``refs/`` starting with ``prefix``, loose overriding packed."""
        merged = {n: r for n, r in self._packed().items() if n.startswith(prefix)}
        root = self.git_dir / "refs"
        for dirpath, _dirs, files in os.walk(root):
            for fname in files:
                full = Path(dirpath, fname)
                name = full.relative_to(self.git_dir).as_posix()
                if not name.startswith(prefix) or fname.endswith(".lock"):
                    continue
                ref = self._read_loose(name)
                if ref is not None:
                    merged[name] = ref
        for name in sorted(merged):
            yield merged[name]
