"""Hostile input: every on-disk format gitodb reads, damaged at random (hypothesis).

Formats: loose objects, a pack, its idx (v2 and v1) and ``.rev``, packed-refs, a
loose ref, a reftable table and ``tables.list``, the config, an alternates file.
Damage: a flipped bit, a truncation, inserted bytes, and edits of the size
fields each format has (loose header size, pack entry header size, idx fan-out
and offsets, reftable block lengths and footer positions).

For every case, each ``gitodb`` command run on the damaged repository must

* end with a status and at most Git's diagnostic lines (``error:``/``warning:``
  lines, then one ``fatal:`` line), never a traceback;
* finish within ``CASE_TIMEOUT`` seconds: commands run in a worker process
  (``_hostile_worker.py``) that is killed when it overruns (a hang is a failure);
* allocate at most ``memory_bound(input)`` bytes at once (``tracemalloc`` in the
  worker, with ``RLIMIT_AS`` behind it): deflate expands at most ~1032:1, so no
  honest reading of the damaged files needs more;
* agree with ``git`` (2.39 on PATH; 2.55 for reftable, skipped when absent) on
  accepting or rejecting the input where Git can be asked the same question, and
  print the same bytes when both accept.

Sized by ``GITODB_STRESS`` (``conftest.stress_scale()``); each test prints the
number of cases it ran (``-s`` shows them; ``CASES`` collects them).
"""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import stress_scale
from gitodb import compress
from gitodb.pack.entry import encode_entry_header, parse_entry_header
from helpers import DATA, git, git_env

pytestmark = pytest.mark.stress

WORKER = Path(__file__).with_name("_hostile_worker.py")
GIT_255 = Path(__file__).resolve().parents[3] / "shared/git-2.55/git/bin/git"
#: generous: a case takes milliseconds; only a hang gets near it
CASE_TIMEOUT = 30.0
#: fixed overhead allowed per case (interpreter state the command sets up)
MEMORY_SLACK = 24 << 20
#: per-test case counts of this run, for the README numbers
CASES: Counter[str] = Counter()
#: agreement failures tolerated because another branch owns the code (see Fixture)
DIVERGED: Counter[str] = Counter()
#: cases where Git silently listed less than the undamaged repository holds and gitodb
#: refused the damage instead
GIT_SILENT: Counter[str] = Counter()
#: a packed-refs damaged into entries that are out of order or badly named (but
#: safe): Git trusts the "sorted" trait and iterates in file order or skips the ref as
#: broken, gitodb lists it sorted.  Lines Git dies on are refused alike; traceback,
#: hang and memory checks stay strict here.
PACKED_ORDER = "packed-refs order and broken names are not Git's"


def memory_bound(input_size: int) -> int:
    """Most bytes a command may hold at once reading ``input_size`` bytes of damage."""
    return compress.max_inflated_size(input_size) + MEMORY_SLACK


# -- the worker --------------------------------------------------------------------


class Worker:
    """A long-lived ``gitodb`` process; restarted after a hang or a crash."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER), str(4 << 30)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=git_env(),
                bufsize=1,
            )
        return self.proc

    def run(self, argv: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes, int]:
        """``(status, stdout, stderr, peak bytes)``; fails on a hang or a traceback."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        out, err, inp = self.tmp / "out", self.tmp / "err", self.tmp / "in"
        if stdin is not None:
            inp.write_bytes(stdin)
        proc.stdin.write(
            json.dumps(
                {
                    "argv": argv,
                    "out": str(out),
                    "err": str(err),
                    "in": str(inp) if stdin is not None else None,
                }
            )
            + "\n"
        )
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], CASE_TIMEOUT)
        if not ready:
            self.close()
            pytest.fail(f"gitodb {argv} did not finish in {CASE_TIMEOUT} s (hang)")
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            self.proc = None
            pytest.fail(f"gitodb {argv} killed the process (status {code})")
        reply = json.loads(line)
        assert reply["tb"] is None, f"gitodb {argv} raised:\n{reply['tb']}"
        return reply["rc"], out.read_bytes(), err.read_bytes(), reply["peak"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# -- fixtures: one repository of each kind, damaged in place and restored -------------


@dataclass
class Fixture:
    """A repository and the file of it that a test damages."""

    repo: Path
    target: Path
    #: gitodb/git argument lists run on the damaged repository (after ``--git-dir``)
    commands: list[list[str]]
    #: commands whose accept/reject (and output, when both accept) Git must share
    compare: list[list[str]] = field(default_factory=list)
    git: str = "git"
    #: (offset, length) ranges of size fields that a size edit may rewrite
    size_edit: Callable[[bytes, int, int], bytes] | None = None
    #: commands fed ``stdin`` (compared with Git too)
    stdin: bytes = b""
    stdin_commands: list[list[str]] = field(default_factory=list)
    #: why gitodb may still disagree with Git here (counted in DIVERGED, not failed)
    known_divergence: str | None = None


def _build_files_repo(root: Path) -> Path:
    repo = root / "files.git"
    work = root / "work"
    git("init", "-q", "-b", "main", "--separate-git-dir", repo, work)
    for i in range(8):
        (work / f"f{i % 3}.txt").write_text("".join(f"line {j} {i}\n" for j in range(40 + i)))
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", f"c{i}", cwd=work)
    git("tag", "-a", "-m", "tag", "v1", cwd=work)
    git("-c", "pack.writeReverseIndex=true", "repack", "-q", "-a", "-d", "-f", cwd=work)
    git("pack-refs", "--all", cwd=work)
    (work / "loose.txt").write_text("a loose blob\n" * 20)
    git("add", "loose.txt", cwd=work)
    git("commit", "-q", "-m", "loose", cwd=work)  # main is now a loose ref
    return repo


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, object]]:
    root = Path(tempfile.mkdtemp(prefix="hostile-"))
    repo = _build_files_repo(root)
    (pack,) = (repo / "objects/pack").glob("*.pack")
    # the same repository with a version 1 index
    v1 = root / "v1.git"
    shutil.copytree(repo, v1)
    (v1_pack,) = (v1 / "objects/pack").glob("*.pack")
    for suffix in (".idx", ".rev"):
        v1_pack.with_suffix(suffix).unlink()
    git("index-pack", "--index-version=1", v1_pack)
    # a repository that borrows every object through its alternates file
    alt = root / "alt.git"
    git("init", "-q", "--bare", alt)
    (alt / "objects/info/alternates").write_text(f"{repo / 'objects'}\n")
    for p in (repo / "refs", repo / "packed-refs", repo / "HEAD"):
        if p.is_dir():
            shutil.copytree(p, alt / p.name, dirs_exist_ok=True)
        else:
            shutil.copy(p, alt / p.name)
    reftable = root / "reftable.git"
    shutil.copytree(DATA / "reftable-small" / "repo", reftable)
    for p in [*root.rglob("*")]:
        if p.is_file():
            p.chmod(0o644)
    worker = Worker(root)
    yield {
        "root": root,
        "repo": repo,
        "pack": pack,
        "v1": v1,
        "v1_pack": v1_pack,
        "alt": alt,
        "reftable": reftable,
        "worker": worker,
    }
    worker.close()
    shutil.rmtree(root, ignore_errors=True)


def _loose_paths(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / "objects").glob("??/*") if p.is_file())


def _oid_of(path: Path) -> str:
    return path.parent.name + path.name


def _edit_loose_size(data: bytes, pick: int, value: int) -> bytes:
    try:
        raw = compress.new_inflater().decompress(data)
    except Exception:  # noqa: BLE001 - already damaged: leave it
        return data
    nul = raw.find(b"\0")
    sp = raw.find(b" ")
    if nul < 0 or sp < 0:
        return data
    return compress.deflate(raw[: sp + 1] + b"%d" % value + raw[nul:])


def _edit_pack_size(data: bytes, pick: int, value: int) -> bytes:
    # walk to the ``pick``-th entry header through the index-free scan of the fixture
    offsets = _PACK_OFFSETS.get(len(data))
    if not offsets:
        return data
    off = offsets[pick % len(offsets)]
    t, _size, hlen = parse_entry_header(data, off)
    return data[:off] + encode_entry_header(t, value) + data[off + hlen :]


def _edit_idx_field(data: bytes, pick: int, value: int) -> bytes:
    # a fan-out entry (v2: after the 8-byte header) or an offset field
    base = 8 if data[:4] == b"\xfftOc" else 0
    at = base + 4 * (pick % 256) if pick % 2 else len(data) - 40 - 4 * (1 + pick % 8)
    return data[:at] + (value & 0xFFFFFFFF).to_bytes(4, "big") + data[at + 4 :]


def _edit_reftable_field(data: bytes, pick: int, value: int) -> bytes:
    # a block length (3 bytes after a block type) or one of the footer positions
    if pick % 2 and len(data) > 100:
        at = len(data) - 68 + 24 + 8 * (pick % 5)
        return data[:at] + (value & (2**64 - 1)).to_bytes(8, "big") + data[at + 8 :]
    starts = [i for i in range(24, len(data) - 72) if data[i] in b"rgoi"]
    if not starts:
        return data
    at = starts[pick % len(starts)] + 1
    return data[:at] + (value & 0xFFFFFF).to_bytes(3, "big") + data[at + 3 :]


_PACK_OFFSETS: dict[int, list[int]] = {}

INTERESTING = [
    0,
    1,
    2,
    31,
    255,
    4096,
    2**31 - 1,
    2**31,
    2**32,
    2**40,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
]


def _fixture(world: dict[str, object], kind: str) -> Fixture:
    repo = world["repo"]
    assert isinstance(repo, Path)
    loose = _loose_paths(repo)
    if kind.startswith("loose") and kind[5:].isdigit():
        target = loose[int(kind[5:]) % len(loose)]
        oid = _oid_of(target)
        return Fixture(
            repo,
            target,
            [["cat-file", "-p", oid], ["cat-file", "-s", oid], ["cat-file", "-t", oid]],
            compare=[["cat-file", "-t", oid]],
            size_edit=_edit_loose_size,
            stdin=f"{oid}\n".encode(),
            stdin_commands=[["cat-file", "--batch-check"]],
        )
    if kind in ("pack", "idx", "rev", "idx1"):
        pack = world["v1_pack" if kind == "idx1" else "pack"]
        assert isinstance(pack, Path)
        r = pack.parents[2]
        target = pack if kind == "pack" else pack.with_suffix(".rev" if kind == "rev" else ".idx")
        if kind == "pack" and not _PACK_OFFSETS:
            out = git("verify-pack", "-v", pack.with_suffix(".idx")).decode().splitlines()
            offs = sorted(
                int(x.split()[4])
                for x in out
                if len(x.split()) >= 5 and x.split()[1] in ("blob", "tree", "commit", "tag")
            )
            _PACK_OFFSETS[pack.stat().st_size] = offs
        edit = {
            "pack": _edit_pack_size,
            "idx": _edit_idx_field,
            "idx1": _edit_idx_field,
            "rev": None,
        }[kind]
        check = ["cat-file", "--batch-all-objects", "--batch-check"]
        return Fixture(
            r,
            target,
            [
                ["verify-pack", str(pack.with_suffix(".idx"))],
                check,
                ["cat-file", "--batch-all-objects", "--batch"],
            ],
            compare=[["verify-pack", str(pack.with_suffix(".idx"))]] if kind != "rev" else [check],
            size_edit=edit,
        )
    if kind == "packed-refs":
        return Fixture(
            repo,
            repo / "packed-refs",
            [["show-ref"], ["for-each-ref"]],
            compare=[["show-ref"]],
            known_divergence=PACKED_ORDER,
        )
    if kind == "loose-ref":
        return Fixture(
            repo,
            repo / "refs/heads/main",
            [["show-ref"], ["cat-file", "-t", "main"]],
            compare=[["show-ref"]],
        )
    if kind == "config":
        # Git 2.55 where present: the config rules gitodb follows (2.39 takes a bare
        # core.logAllRefUpdates as true, 2.55 refuses it)
        return Fixture(
            repo,
            repo / "config",
            [["cat-file", "-t", "HEAD"], ["show-ref"]],
            compare=[["cat-file", "-t", "HEAD"]],
            git=str(GIT_255) if GIT_255.exists() else "git",
        )
    if kind == "alternates":
        alt = world["alt"]
        assert isinstance(alt, Path)
        oid = _oid_of(loose[0])
        return Fixture(
            alt,
            alt / "objects/info/alternates",
            [["cat-file", "-p", oid], ["cat-file", "--batch-all-objects", "--batch-check"]],
            compare=[["cat-file", "-p", oid]],
        )
    rt = world["reftable"]
    assert isinstance(rt, Path)
    if kind == "reftable":
        (table,) = (rt / "reftable").glob("*.ref")
        return Fixture(
            rt,
            table,
            [["show-ref"], ["reflog", "list"], ["for-each-ref"], ["reflog", "show", "main"]],
            compare=[["show-ref"], ["reflog", "list"]],
            git=str(GIT_255),
            size_edit=_edit_reftable_field,
        )
    if kind == "tables.list":
        return Fixture(
            rt,
            rt / "reftable/tables.list",
            [["show-ref"], ["reflog", "list"]],
            compare=[["show-ref"]],
            git=str(GIT_255),
        )
    raise AssertionError(kind)


# -- damage --------------------------------------------------------------------------

damage = st.one_of(
    st.tuples(st.just("flip"), st.integers(min_value=0), st.integers(min_value=0, max_value=7)),
    st.tuples(st.just("truncate"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("insert"), st.integers(min_value=0), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("size"), st.integers(min_value=0), st.sampled_from(INTERESTING)),
)


def apply_damage(data: bytes, how: tuple[str, int, object], fx: Fixture) -> bytes:
    kind, where, arg = how
    n = len(data)
    if kind == "flip":
        if not n:
            return b"\x01"
        i = where % n
        return data[:i] + bytes([data[i] ^ (1 << int(arg))]) + data[i + 1 :]  # type: ignore[call-overload]
    if kind == "truncate":
        return data[: where % (n + 1)] if n else data
    if kind == "insert":
        i = where % (n + 1)
        return data[:i] + bytes(arg) + data[i:]  # type: ignore[call-overload]
    if fx.size_edit is None:  # no size field: flip instead
        return apply_damage(data, ("flip", where, where % 8), fx)
    return fx.size_edit(data, where, int(arg))  # type: ignore[call-overload]


def _diagnostics_like_git(err: bytes) -> None:
    """``error:``/``warning:`` lines and at most one ``fatal:`` line, last."""
    # Lines end at \n only: a message may quote damaged bytes (\r, \v, ...) as Git's do.
    lines = err.decode("utf-8", "replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    fatal = [i for i, line in enumerate(lines) if line.startswith("fatal: ")]
    assert len(fatal) <= 1, err
    if fatal:
        # a fatal message may span lines (Git's "found:\n\tname" lists)
        assert all(
            line.startswith(("error: ", "warning: ", "hint: ")) for line in lines[: fatal[0]]
        ), err
        assert all(line.startswith("\t") for line in lines[fatal[0] + 1 :]), err
    else:
        assert all(
            line.startswith(("error: ", "warning: ", "usage: ", "   or: ", "\t"))
            or not line.strip()
            for line in lines
        ), err


def run_case(world: dict[str, object], kind: str, how: tuple[str, int, object]) -> None:
    fx = _fixture(world, kind)
    if fx.git != "git" and not Path(fx.git).exists():
        pytest.skip("needs Git 2.55 for reftable")
    original = fx.target.read_bytes()
    damaged = apply_damage(original, how, fx)
    worker = world["worker"]
    assert isinstance(worker, Worker)
    # Git's output on the undamaged repository, to tell a silent loss from a real answer.
    baseline = {
        tuple(a): subprocess.run(
            [fx.git, "--git-dir", str(fx.repo), *a],
            capture_output=True,
            env=git_env(),
            timeout=CASE_TIMEOUT,
        ).stdout
        for a in fx.compare
    }
    try:
        fx.target.write_bytes(damaged)
        # all of the repository's files count: a damaged index can point anywhere in a pack
        size = sum(p.stat().st_size for p in fx.repo.rglob("*") if p.is_file())
        runs = [(a, None) for a in fx.commands] + [(a, fx.stdin) for a in fx.stdin_commands]
        for args, stdin in runs:
            argv = ["--git-dir", str(fx.repo), *args]
            rc, out, err, peak = worker.run(argv, stdin)
            CASES[kind] += 1
            assert rc in (0, 1, 128, 129), (argv, rc, err)
            _diagnostics_like_git(err)
            assert peak <= memory_bound(size), (argv, peak, memory_bound(size))
            if args in fx.compare or stdin is not None:
                g = subprocess.run(
                    [fx.git, "--git-dir", str(fx.repo), *args],
                    input=stdin,
                    capture_output=True,
                    env=git_env(),
                    timeout=CASE_TIMEOUT,
                )
                agree = (rc == 0) == (g.returncode == 0) and (rc != 0 or out == g.stdout)
                if (
                    not agree
                    and rc != 0
                    and g.returncode == 0
                    and _lost_lines(g.stdout, baseline.get(tuple(args)))
                ):
                    # Git stopped at the damage and exited 0 with part of its listing
                    # (reftable: a corrupt record ends the iteration); gitodb refuses
                    # with an error naming the offset: stricter, never a lost answer.
                    GIT_SILENT[kind] += 1
                    continue
                if not agree and fx.known_divergence:
                    DIVERGED[kind] += 1
                    continue
                assert (rc == 0) == (g.returncode == 0), (
                    argv,
                    how,
                    rc,
                    err,
                    g.returncode,
                    g.stderr,
                )
                if rc == 0:
                    assert out == g.stdout, (argv, how)
    finally:
        fx.target.write_bytes(original)


def _lost_lines(damaged: bytes, undamaged: bytes | None) -> bool:
    """Whether ``damaged`` is ``undamaged`` with lines missing (and none added)."""
    if undamaged is None:
        return False
    before, after = undamaged.splitlines(), damaged.splitlines()
    return len(after) < len(before) and set(after) <= set(before)


def _settings() -> settings:
    return settings(
        max_examples=max(1, 25 * stress_scale()),
        deadline=None,
        database=None,
        derandomize=stress_scale() <= 1,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


KINDS = [
    "loose0",
    "loose1",
    "loose2",
    "pack",
    "idx",
    "idx1",
    "rev",
    "packed-refs",
    "loose-ref",
    "reftable",
    "tables.list",
    "config",
    "alternates",
]


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_input(world: dict[str, object], kind: str) -> None:
    @_settings()
    @given(how=damage)
    def case(how: tuple[str, int, object]) -> None:
        run_case(world, kind, how)

    case()
    print(
        f"\nhostile input: {kind}: {CASES[kind]} command runs"
        + (f", {DIVERGED[kind]} known divergences from Git" if DIVERGED[kind] else "")
        + (f", {GIT_SILENT[kind]} where Git silently listed less" if GIT_SILENT[kind] else "")
    )


def test_case_counts_recorded() -> None:
    """Runs last in this file: the total, for the README."""
    print(
        f"\nhostile input: {sum(CASES.values())} command runs: {dict(CASES)}; "
        f"known divergences: {dict(DIVERGED)}; Git silently listed less: {dict(GIT_SILENT)}"
    )
    assert not CASES or all(CASES[k] for k in CASES)
