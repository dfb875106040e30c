"""Git's content conversions between the object database and the work tree.

On the way in (``to_git``, as ``hash-object`` applies it): the ``filter`` driver's
``clean`` command, then line endings (``text``/``eol``/``crlf`` attributes,
``core.autocrlf``, ``core.eol``; ``core.safecrlf`` checks the round trip when
the object is written), then ``ident``.  On the way out (``to_worktree``, as
``cat-file --filters`` applies it): ``ident``, line endings, then ``smudge``.
``textconv`` is ``diff.<driver>.textconv`` run on the smudged content.

Drivers run through the shell as Git runs them: ``%f`` in a filter command is
the path (shell-quoted); a textconv command gets a temporary file holding the
content.  A filter that fails leaves the content unconverted with Git's
``error:`` lines, unless ``filter.<driver>.required`` (then
``ConversionError``).  A driver's ``process`` command (the long-running
protocol, ``gitodb.repo.filterproc``) takes precedence over its ``clean`` and
``smudge``; one process serves the whole run.  ``working-tree-encoding``
(``gitodb.objects.wtencoding``) re-encodes between the filter and the line
endings, as Git does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError
from gitodb.objects.attributes import AttrValue
from gitodb.objects.eol import (
    CrlfAction,
    SafeCrlf,
    crlf_to_git,
    crlf_to_worktree,
    ident_to_git,
    ident_to_worktree,
    output_eol_is_crlf,
)
from gitodb.objects.wtencoding import (
    EncodingError,
    attribute_encoding,
    encode_to_git,
    encode_to_worktree,
)
from gitodb.repo.attributes import AttributeReader

if TYPE_CHECKING:
    from gitodb.repo import Repository
    from gitodb.repo.config import Config
    from gitodb.repo.filterproc import FilterProcesses

# Git runs a command without a shell when its name has none of these
_SHELL_META = set("|&;<>()$`\\\"' \t\n*?[#~=%")


class ConversionError(GitodbError):
    """A conversion Git would die on (a required filter failed, ``core.safecrlf``)."""


def _crlf_attr(value: AttrValue) -> CrlfAction:
    """Git's ``git_path_check_crlf`` for the ``text`` (or old ``crlf``) attribute."""
    if value is True:
        return CrlfAction.TEXT
    if value is False:
        return CrlfAction.BINARY
    if value == "input":
        return CrlfAction.TEXT_INPUT
    if value == "auto":
        return CrlfAction.AUTO
    return CrlfAction.UNDEFINED


def _sq_quote(text: str) -> str:
    """Git's ``sq_quote_buf``: single quotes, with ``'`` and ``!`` escaped."""
    return "'" + text.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def _expand_filter_command(cmd: str, path: str) -> str:
    """``%f`` is the quoted path and ``%%`` a percent sign; other ``%`` stay."""
    out: list[str] = []
    i = 0
    while i < len(cmd):
        if cmd[i] == "%" and cmd[i + 1 : i + 2] == "f":
            out.append(_sq_quote(path))
            i += 2
        elif cmd[i] == "%" and cmd[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
        else:
            out.append(cmd[i])
            i += 1
    return "".join(out)


def _argv(cmd: str, args: list[str]) -> list[str]:
    """Git's ``prepare_shell_cmd``: the command itself, or ``sh -c '<cmd> "$@"'``."""
    if not _SHELL_META.intersection(cmd):
        return [cmd, *args]
    if args:
        return ["sh", "-c", cmd + ' "$@"', cmd, *args]
    return ["sh", "-c", cmd]


def _err(line: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class Conversion:
    """The conversions for paths of one repository (``repo`` None: outside any)."""

    def __init__(
        self,
        repo: Repository | None,
        config: Config,
        *,
        work_tree: str | None = None,
        attr_source: str | None = None,
    ) -> None:
        self.repo = repo
        self.config = config
        self.work_tree = work_tree
        self.reader = AttributeReader(repo, config, work_tree=work_tree, source=attr_source)
        autocrlf = config.get_bool_or_str("core.autocrlf", ("input",), False)
        self.autocrlf = "input" if autocrlf == "input" else ("true" if autocrlf else "false")
        eol = (config.get("core.eol") or "native").lower()
        self.core_eol = eol if eol in ("lf", "crlf") else "native"
        safe = config.get_bool_or_str("core.safecrlf", ("warn",), "warn")
        self.safecrlf = (
            SafeCrlf.WARN if safe == "warn" else (SafeCrlf.DIE if safe else SafeCrlf.OFF)
        )
        self.roundtrip = config.get("core.checkRoundtripEncoding") or "SHIFT-JIS"
        self._processes: FilterProcesses | None = None

    # ------------------------------------------------------------ attributes
    def _crlf_action(self, attrs: dict[str, AttrValue]) -> CrlfAction:
        """Git's ``convert_attrs``: the line-ending action for these attributes."""
        action = _crlf_attr(attrs.get("text"))
        if action is CrlfAction.UNDEFINED:
            action = _crlf_attr(attrs.get("crlf"))
        if action is not CrlfAction.BINARY:
            eol = attrs.get("eol")
            if action is CrlfAction.AUTO and eol == "lf":
                action = CrlfAction.AUTO_INPUT
            elif action is CrlfAction.AUTO and eol == "crlf":
                action = CrlfAction.AUTO_CRLF
            elif eol == "lf":
                action = CrlfAction.TEXT_INPUT
            elif eol == "crlf":
                action = CrlfAction.TEXT_CRLF
        if action is CrlfAction.TEXT:
            crlf = self.autocrlf == "true" or (self.autocrlf == "false" and self.core_eol == "crlf")
            action = CrlfAction.TEXT_CRLF if crlf else CrlfAction.TEXT_INPUT
        if action is CrlfAction.UNDEFINED:
            action = {
                "false": CrlfAction.BINARY,
                "true": CrlfAction.AUTO_CRLF,
                "input": CrlfAction.AUTO_INPUT,
            }[self.autocrlf]
        return action

    def _driver(self, attrs: dict[str, AttrValue]) -> str | None:
        """The ``filter`` driver's name when one is configured (Git ignores the others)."""
        name = attrs.get("filter")
        if not isinstance(name, str):
            return None
        prefix = f"filter.{name}."
        if not any(k.startswith(prefix) for k in self.config.keys("filter.")):
            return None
        return name

    def _encoding(self, attrs: dict[str, AttrValue]) -> str | None:
        """The ``working-tree-encoding`` to convert for (Git dies on true/false)."""
        try:
            return attribute_encoding(attrs.get("working-tree-encoding"))
        except EncodingError as e:
            raise ConversionError(e.message) from None

    def may_convert(self, path: str) -> bool:
        """Whether any conversion applies to ``path`` (else its bytes are stored as they are)."""
        attrs = self.reader.attributes(path)
        return (
            self._driver(attrs) is not None
            or attrs.get("ident") is True
            or self._crlf_action(attrs) is not CrlfAction.BINARY
            or self._encoding(attrs) is not None
        )

    def would_convert_to_git(self, path: str) -> bool:
        """Git's ``would_convert_to_git``: a clean filter or ``ident`` applies to ``path``
        (then the content is read whole instead of streamed)."""
        attrs = self.reader.attributes(path)
        name = self._driver(attrs)
        if name is not None and (
            self.config.get(f"filter.{name}.clean") or self.config.get(f"filter.{name}.process")
        ):
            return True
        return attrs.get("ident") is True

    # ------------------------------------------------------------ conversions
    def to_git(self, path: str, data: bytes, *, write: bool = False) -> bytes:
        """``data`` of the work-tree file ``path`` as Git stores it (``convert_to_git``).

        ``write``: the object is being written, so ``core.safecrlf`` applies.
        """
        attrs = self.reader.attributes(path)
        name = self._driver(attrs)
        if name is not None:
            data = self._run_filter(name, "clean", path, data)
        enc = self._encoding(attrs)
        if enc is not None:
            try:
                data = encode_to_git(
                    path, data, enc, write=write, say=_err, roundtrip=self.roundtrip
                )
            except EncodingError as e:
                for hint in e.hints:
                    _err(f"hint: {hint}")
                raise ConversionError(e.message) from None
        action = self._crlf_action(attrs)
        warnings: list[str] = []
        data = crlf_to_git(
            data,
            action,
            crlf_out=output_eol_is_crlf(action, self.autocrlf, self.core_eol),
            safecrlf=self.safecrlf if write else SafeCrlf.OFF,
            path=path,
            warn=warnings,
        )
        for w in warnings:
            _err(f"warning: {w}")
        if attrs.get("ident") is True:
            data = ident_to_git(data)
        return data

    def to_worktree(self, path: str, data: bytes) -> bytes:
        """The blob ``data`` as Git writes it to ``path`` in the work tree."""
        attrs = self.reader.attributes(path)
        blob = self._blob_hex(data) if attrs.get("ident") is True or attrs.get("filter") else ""
        if attrs.get("ident") is True:
            data = ident_to_worktree(data, blob)
        action = self._crlf_action(attrs)
        data = crlf_to_worktree(
            data, action, crlf_out=output_eol_is_crlf(action, self.autocrlf, self.core_eol)
        )
        enc = self._encoding(attrs)
        if enc is not None:
            data = encode_to_worktree(path, data, enc, say=_err)
        name = self._driver(attrs)
        if name is not None:
            data = self._run_filter(name, "smudge", path, data, blob=blob)
        return data

    def textconv_command(self, path: str) -> str | None:
        """``diff.<driver>.textconv`` for ``path``'s ``diff`` attribute, or None."""
        name = self.reader.attributes(path).get("diff")
        if not isinstance(name, str):
            return None
        return self.config.get(f"diff.{name}.textconv") or None

    def textconv(self, path: str, data: bytes) -> bytes | None:
        """The textconv output for the blob ``data`` at ``path``; None without a driver.

        The command reads a temporary file holding the work-tree form of the blob.
        """
        cmd = self.textconv_command(path)
        if cmd is None:
            return None
        content = self.to_worktree(path, data)
        base = os.path.basename(path) or "blob"
        fd, tmp = tempfile.mkstemp(prefix="gitodb-textconv-", suffix="_" + base)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            try:
                proc = subprocess.run(
                    _argv(cmd, [tmp]), stdout=subprocess.PIPE, cwd=self._cwd(), check=False
                )
            except OSError as e:
                _err(f"error: cannot run {cmd}: {e.strerror}")
                raise ConversionError("unable to read files to diff") from None
        finally:
            os.unlink(tmp)
        if proc.returncode != 0:
            raise ConversionError("unable to read files to diff")
        return proc.stdout

    # ------------------------------------------------------------ helpers
    def _blob_hex(self, data: bytes) -> str:
        from gitodb.objects.format import SHA1
        from gitodb.repo.write import compute_object_id

        fmt = self.repo.object_format if self.repo is not None else SHA1
        return compute_object_id(fmt, "blob", data).hex()

    def _cwd(self) -> str | None:
        return self.work_tree

    def _run_filter(
        self, name: str, which: str, path: str, data: bytes, *, blob: str = ""
    ) -> bytes:
        """Run ``filter.<name>.process`` or else ``filter.<name>.<which>``; the
        unchanged data when it fails (not required).  ``blob``: the id of the blob
        being smudged, which a process is told."""
        required = self.config.get_bool(f"filter.{name}.required", False)
        quoted_name = f"'{name}'" if which == "clean" else name  # Git's two messages differ
        failed = f"{path}: {which} filter {quoted_name} failed"
        process = self.config.get(f"filter.{name}.process")
        if process:
            if self._processes is None:
                from gitodb.repo.filterproc import FilterProcesses

                self._processes = FilterProcesses(lambda c: _argv(c, []), self._cwd())
            out = self._processes.apply(process, which, path, data, blob or None, _err)
            if out is None and required:
                raise ConversionError(failed)
            return data if out is None else out
        cmd = self.config.get(f"filter.{name}.{which}")
        if not cmd:
            if required:
                raise ConversionError(failed)
            return data
        full = _expand_filter_command(cmd, path)
        try:
            proc = subprocess.run(
                _argv(full, []),
                input=data,
                stdout=subprocess.PIPE,
                cwd=self._cwd(),
                check=False,
            )
        except OSError as e:
            _err(f"error: cannot run {full}: {e.strerror}")
            _err(f"error: cannot fork to run external filter '{full}'")
            if required:
                raise ConversionError(failed) from None
            return data
        if proc.returncode != 0:
            status = proc.returncode if proc.returncode > 0 else 128 - proc.returncode
            _err(f"error: external filter '{full}' failed {status}")
            _err(f"error: external filter '{full}' failed")
            if required:
                raise ConversionError(failed)
            return data
        return proc.stdout


def conversion_for(
    repo: Repository | None,
    config: Config,
    *,
    explicit_git_dir: bool = False,
    attr_source: str | None = None,
) -> Conversion:
    """The ``Conversion`` a command run from the current directory uses."""
    work_tree = None
    if repo is not None:
        from gitodb.repo import find_work_tree_top

        work_tree = find_work_tree_top(repo, explicit_git_dir)
        if work_tree is None and not config.get_bool("core.bare", False):
            # GIT_DIR without a work tree setting: Git takes the current directory
            work_tree = os.environ.get("GIT_WORK_TREE") or config.get("core.worktree")
            if work_tree is None and explicit_git_dir:
                work_tree = os.getcwd()
    return Conversion(repo, config, work_tree=work_tree, attr_source=attr_source)
