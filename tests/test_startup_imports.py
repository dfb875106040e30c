"""Each command imports only what it uses: a structural check of start-up, never a timing.

A command runs in a fresh interpreter (``python -S``: no ``.pth`` start-up hooks of the
installation, which may import anything) and reports ``sys.modules``; modules a
command does not need must be absent.  Start-up time itself is measured by
``benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects import sha1dc
from helpers import git, git_env, run_cli

#: never needed by the plain commands below
HEAVY = {
    "pyarrow",
    "pandas",
    "numpy",
    "dask",
    "hypothesis",
    "gitodb.bulk",
    "gitodb.dask",
    # only `gitodb calibrate` measures, only `version --build-options` describes
    "platform",
    "gitodb.compress.info",
    # standard-library modules that pull in many others
    "json",
    "shutil",
    "tempfile",
    "subprocess",
    "zipfile",
    "bz2",
    "lzma",
    "calendar",
}
ZLIB_LIBRARIES = {"zlib_ng", "isal", "deflate"}

PROBE = """
import io, sys
from gitodb.cli.main import main
out = sys.stdout
sys.stdout = io.TextIOWrapper(io.BytesIO())
status = main(sys.argv[1:])
sys.stdout = out
modules = sorted(sys.modules)
import json  # after the snapshot
print(json.dumps([status, modules]))
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("startup") / "r"
    git("init", "-q", str(path))
    (path / "a.txt").write_text("a\n" * 100)
    (path / "dir").mkdir()
    (path / "dir" / "b.txt").write_text("b\n")
    git("-C", str(path), "add", ".")
    git("-C", str(path), "commit", "-q", "-m", "one")
    (path / "a.txt").write_text("a\n" * 101)
    git("-C", str(path), "commit", "-q", "-am", "two")
    git("-C", str(path), "tag", "-a", "-m", "t", "v1")
    git("-C", str(path), "branch", "topic")
    git("-C", str(path), "gc", "-q")  # packed objects (with deltas) and packed refs
    return path


def modules_after(repo: Path, *args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules loaded once ``gitodb <args>`` has run in a fresh interpreter."""
    # -S: without the installation's .pth hooks; the path they set up is passed on.
    environ = {**git_env(), **(env or {})}
    environ["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    p = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, f"--git-dir={repo / '.git'}", *args],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    status, modules = json.loads(p.stdout.splitlines()[-1])
    assert status == 0, p.stderr
    return set(modules)


def _under(modules: set[str], names: set[str]) -> set[str]:
    return {m for m in modules if m in names or any(m.startswith(n + ".") for n in names)}


COMMANDS = [
    ["version"],
    ["cat-file", "-t", "HEAD"],
    ["cat-file", "-p", "HEAD"],
    ["for-each-ref"],
    ["show-ref"],
    ["rev-list", "--count", "--all"],
    ["ls-tree", "-r", "HEAD"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_commands_do_not_import_heavy_modules(repo: Path, args: list[str]) -> None:
    loaded = modules_after(repo, *args)
    assert not _under(loaded, HEAVY)
    if sha1dc.native_available():
        # the pure-Python SHA-1DC (and its tables) only when the native core is missing
        assert not _under(loaded, {"gitodb.objects.sha1dc_ref", "gitodb.objects.sha1dc_ubc"})


#: ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``), and each
#: class it makes compiles its methods: more than the rest of a short command's start-up
DATACLASSES = {"dataclasses", "inspect", "ast", "dis", "tokenize"}


@pytest.mark.parametrize(
    "args",
    [
        ["cat-file", "-t", "HEAD"],
        ["cat-file", "-s", "HEAD"],
        ["cat-file", "-p", "HEAD"],
        ["for-each-ref"],
        ["show-ref"],
        ["ls-tree", "-r", "HEAD"],
        ["rev-list", "--count", "--all"],
    ],
    ids=" ".join,
)
def test_commands_do_not_import_dataclasses(repo: Path, args: list[str]) -> None:
    assert not _under(modules_after(repo, *args), DATACLASSES)


@pytest.fixture(scope="module")
def reftable_repo(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("startup-reftable") / "rt"
    git("clone", "-q", str(repo), str(copy))
    run_cli(copy, "refs", "migrate", "--ref-format=reftable")
    assert (copy / ".git" / "reftable" / "tables.list").exists()
    return copy


REFTABLE_READERS = [
    ["cat-file", "-t", "HEAD"],
    ["cat-file", "-s", "HEAD"],
    ["cat-file", "-p", "HEAD"],
    ["for-each-ref"],
    ["show-ref"],
]


@pytest.mark.parametrize("args", REFTABLE_READERS, ids=" ".join)
def test_a_reftable_repository_imports_no_writer_machinery(
    reftable_repo: Path, args: list[str]
) -> None:
    loaded = modules_after(reftable_repo, *args)
    assert "gitodb.refs.reftable_store" in loaded
    # tempfile (shutil, bz2, lzma) and secrets (random) only when a table is written;
    # the table writer only then too (its options live in gitodb.reftable.options)
    writing = {"tempfile", "shutil", "secrets", "random", "gitodb.reftable.writer"}
    assert not _under(loaded, DATACLASSES | STARTUP_HEAVY | writing)
    # str paths as on the files backend; the footer's CRC-32 loads no zlib library
    assert not _under(loaded, NO_RE_NOR_PATHLIB), sorted(_under(loaded, NO_RE_NOR_PATHLIB))
    if args[:2] != ["cat-file", "-p"]:  # -p inflates the commit: that loads one
        assert not _under(loaded, ZLIB_LIBRARIES), sorted(_under(loaded, ZLIB_LIBRARIES))


#: what reading packed objects' headers does without: the loose reader (its store is
#: made where a lookup misses the packs) and the object model's parsers
UNPARSED = {
    "gitodb.loose",
    "gitodb.objects.blob",
    "gitodb.objects.commit",
    "gitodb.objects.tag",
    "gitodb.objects.tree",
}


@pytest.mark.parametrize("args", [["for-each-ref"], ["show-ref"]], ids=" ".join)
@pytest.mark.parametrize("backend", ["files", "reftable"])
def test_ref_listing_parses_no_object(
    repo: Path, reftable_repo: Path, backend: str, args: list[str]
) -> None:
    loaded = modules_after(repo if backend == "files" else reftable_repo, *args)
    assert not _under(loaded, UNPARSED), sorted(_under(loaded, UNPARSED))


#: what looking up packed headers and listing refs do without: the compression layer
#: (nothing is inflated: a delta's type is its base's), delta application, and the
#: reference-transaction hook's lookup (made when a transaction first asks)
UNINFLATED = {"gitodb.compress", "gitodb.pack.delta", "gitodb.repo.hooks"}


@pytest.mark.parametrize(
    "args", [["for-each-ref"], ["show-ref"], ["cat-file", "-t", "HEAD"]], ids=" ".join
)
@pytest.mark.parametrize("backend", ["files", "reftable"])
def test_header_lookups_load_no_compression_layer(
    repo: Path, reftable_repo: Path, backend: str, args: list[str]
) -> None:
    loaded = modules_after(repo if backend == "files" else reftable_repo, *args)
    assert not _under(loaded, UNINFLATED), sorted(_under(loaded, UNINFLATED))


def test_the_midx_reader_only_where_a_midx_is(repo: Path, tmp_path: Path) -> None:
    assert "gitodb.pack.midx" not in modules_after(repo, "cat-file", "-t", "HEAD")
    copy = tmp_path / "m"
    git("clone", "-q", str(repo), str(copy))
    git("-C", str(copy), "multi-pack-index", "write")
    assert "gitodb.pack.midx" in modules_after(copy, "cat-file", "-t", "HEAD")


@pytest.mark.parametrize(
    "args", [["for-each-ref"], ["show-ref"], ["cat-file", "-t", "HEAD"]], ids=" ".join
)
def test_ref_commands_do_not_import_history(repo: Path, args: list[str]) -> None:
    loaded = modules_after(repo, *args)
    assert not _under(loaded, {"gitodb.history", "gitodb.reftable"})
    # nothing here parses a date or hashes with SHA-256
    assert not _under(loaded, {"datetime", "gitodb.objects.approxidate", "hashlib"})


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_named_zlib_backend_loads_only_itself(repo: Path, args: list[str]) -> None:
    loaded = modules_after(repo, *args, env={"GITODB_ZLIB_BACKEND": "zlib"})
    assert not _under(loaded, ZLIB_LIBRARIES)


def test_version_opens_no_repository(repo: Path) -> None:
    loaded = modules_after(repo, "version")
    assert not _under(loaded, {"gitodb.repo", "gitodb.compress", "gitodb.objects", "gitodb.refs"})


def test_import_gitodb_is_the_package_alone() -> None:
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    p = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys, gitodb; print(' '.join(m for m in sys.modules if 'gitodb' in m))",
        ],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    assert p.stdout.split() == ["gitodb"]


#: Standard-library modules each costing ~1-6 ms of a command's start-up (``typing``
#: ~6 ms; ``importlib`` the package, ``contextlib``, ``signal``) that no command below
#: needs: ``gitodb.types`` gives the run-time ``NamedTuple``/``Protocol``/``cast``,
#: other ``typing`` names stay under ``if TYPE_CHECKING:``; commands load with
#: ``__import__``; ``signal`` only for the SIGPIPE exit.
STARTUP_HEAVY = {"typing", "importlib", "contextlib", "signal", "hashlib"}

#: (command, bound on the modules it loads beyond ``python -S -c pass``'s): a few above
#: what each loads now, so that a new import on a command's path is a decision.
MODULE_BOUNDS = [
    (["version"], 32),
    (["cat-file", "-t", "HEAD"], 90),
    (["cat-file", "-s", "HEAD"], 90),
    (["cat-file", "-p", "HEAD"], 95),
    (["cat-file", "--batch-check"], 91),
    (["show-ref"], 79),
    (["for-each-ref"], 81),
    (["rev-list", "--count", "--all"], 106),
    (["ls-tree", "-r", "HEAD"], 98),
    (["log", "--format=%H"], 124),
]


def _bare_modules() -> set[str]:
    p = subprocess.run(
        [sys.executable, "-S", "-c", "import sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(p.stdout.split())


@pytest.mark.parametrize(
    ("args", "bound"), MODULE_BOUNDS, ids=[" ".join(a) for a, _ in MODULE_BOUNDS]
)
def test_commands_load_few_modules(repo: Path, args: list[str], bound: int) -> None:
    git("-C", str(repo), "commit-graph", "write", "--reachable")
    loaded = modules_after(repo, *args) - _bare_modules()
    assert not _under(loaded, STARTUP_HEAVY | DATACLASSES | HEAVY)
    assert len(loaded) <= bound, f"{len(loaded)} modules: {sorted(loaded)}"


#: What the repository-opening path, the ref and config readers, name resolution and
#: the commands below do without: ``re`` (with ``enum``, ``functools``,
#: ``collections``' helpers: ~5 ms), ``pathlib`` (with ``urllib.parse``, ``ipaddress``,
#: ``fnmatch``: ~2-3 ms), ``unicodedata``.  Patterns compile where first used
#: (``gitodb.lazyre``), paths are ``str`` (``gitodb.purepath``).
NO_RE_NOR_PATHLIB = {
    "re",
    "enum",
    "functools",
    "pathlib",
    "urllib",
    "ipaddress",
    "fnmatch",
    "unicodedata",
}


@pytest.mark.parametrize(
    "args",
    [
        ["version"],
        ["cat-file", "-t", "HEAD"],
        ["cat-file", "-p", "HEAD"],
        ["cat-file", "--batch-check"],
        ["for-each-ref"],
        ["show-ref"],
        ["rev-list", "--count", "--all"],
        ["ls-tree", "-r", "HEAD"],
    ],
    ids=" ".join,
)
def test_commands_do_not_import_re_or_pathlib(repo: Path, args: list[str]) -> None:
    loaded = modules_after(repo, *args)
    assert not _under(loaded, NO_RE_NOR_PATHLIB), sorted(_under(loaded, NO_RE_NOR_PATHLIB))


#: Standard modules the short commands do without: ``collections`` (~1.6 ms with
#: ``keyword``, ``operator`` and ``reprlib``; ``array`` brings it through
#: ``collections.abc``), ``warnings`` (the CLI prints reported damage itself) and
#: ``types`` -- together a tenth of a ref listing's whole run.
NO_COLLECTIONS = {"collections", "array", "warnings", "types", "keyword", "reprlib"}


@pytest.mark.parametrize(
    "args",
    [
        ["version"],
        ["cat-file", "-t", "HEAD"],
        ["cat-file", "-p", "HEAD"],
        ["for-each-ref"],
        ["show-ref"],
        ["rev-list", "--count", "--all"],
        ["ls-tree", "-r", "HEAD"],
    ],
    ids=" ".join,
)
def test_short_commands_do_not_import_collections(repo: Path, args: list[str]) -> None:
    loaded = modules_after(repo, *args)
    assert not _under(loaded, NO_COLLECTIONS), sorted(_under(loaded, NO_COLLECTIONS))


def test_the_gitodb_script_imports_only_the_entry_point(repo: Path) -> None:
    """The installed ``gitodb`` command is ``scripts/gitodb``: it adds nothing to what
    ``main`` imports (pip's console-script wrapper would add ``re``)."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "gitodb"
    environ = {**git_env(), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    p = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(script), f"--git-dir={repo / '.git'}"]
        + ["cat-file", "-t", "HEAD"],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    assert p.stdout == "commit\n"
    names = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if "|" in line}
    assert "gitodb.cli.main" in names
    assert not _under(names, NO_RE_NOR_PATHLIB | STARTUP_HEAVY)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_config_without_include_conditions_loads_no_matcher(repo: Path, args: list[str]) -> None:
    """``includeIf`` conditions' wildmatch and ``~user`` paths' ``pwd`` only when a
    configuration file has them."""
    loaded = modules_after(repo, *args)
    assert not _under(loaded, {"gitodb.refs.wildmatch", "pwd"})


def test_the_program_runs_its_command_with_the_collector_on(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``scripts/gitodb`` starts with the cyclic collector off (start-up's objects are
    long-lived); ``main`` turns it on before the command runs, so a command's own
    cycles are collected.  Called as a library, ``main`` leaves it as it is."""
    import gc

    from gitodb.cli import cat_file
    from gitodb.cli import main as cli

    seen: list[bool] = []
    real = cat_file.run

    def run(args: list[str], ctx: object) -> int:
        seen.append(gc.isenabled())
        return real(args, ctx)  # type: ignore[arg-type]

    monkeypatch.setattr(cat_file, "run", run)
    argv = [f"--git-dir={repo / '.git'}", "cat-file", "-t", "HEAD"]
    gc.disable()
    try:
        assert cli.main(argv) == 0  # a library call: the collector stays off
        assert cli._main(argv, program=True) == 0  # noqa: SLF001 - as the program
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
    assert seen == [False, True]
    assert capsys.readouterr().out == "commit\ncommit\n"
