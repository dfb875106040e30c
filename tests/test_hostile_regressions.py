"""Regression tests for damaged and hostile input: one per reported failure.

Each test builds the damaged file itself (from ``tests/data`` or a repository made
with the ``git`` on PATH) and asserts Git's behaviour: a typed ``GitodbError`` from
the library, one ``fatal:``/``error:`` line and Git's exit status from the CLI.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.errors import GitodbError, ReftableError
from gitodb.reftable.reader import TableReader
from helpers import DATA, git, git_env

SMALL = DATA / "reftable-small" / "repo"
SMALL_TABLE = "0x000000000001-0x000000000063-d9db9e39.ref"
SMALL_LOGS = [
    b"HEAD",
    b"refs/heads/feature-a",
    b"refs/heads/feature-b",
    b"refs/heads/main",
    b"refs/heads/release/0.3",
    b"refs/heads/topic/renamed",
    b"refs/notes/commits",
    b"refs/stash",
]


def gitodb(
    *args: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,
    stdout: int | None = subprocess.PIPE,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI in a subprocess (a hang guard timeout only, not a speed bound)."""
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *map(os.fspath, args)],
        cwd=cwd,
        input=input,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env or git_env(),
        timeout=300,
        check=False,
    )


def one_line(stderr: bytes, prefix: bytes = b"fatal: ") -> str:
    """The single diagnostic line; fails on a traceback or several lines."""
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), stderr
    return lines[0].decode(errors="replace")


# -- 1: reftable loops make progress ----------------------------------------------


def _flipped_small_table(tmp_path: Path, offset: int, bit: int) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(SMALL, repo)
    table = repo / "reftable" / SMALL_TABLE
    data = bytearray(table.read_bytes())
    data[offset] ^= bit
    table.write_bytes(bytes(data))
    return repo


def test_log_refnames_with_damaged_log_index_makes_progress(tmp_path, monkeypatch):
    # Byte 5693 lies in the log index: the seek for the next ref name used to land
    # on an earlier block and re-seek the same key forever.
    repo = _flipped_small_table(tmp_path, 5693, 0x01)
    calls = 0
    leaf_for = TableReader._leaf_for

    def counted(self, btype, key):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        assert calls < 100, "log walk does not make progress"
        return leaf_for(self, btype, key)

    monkeypatch.setattr(TableReader, "_leaf_for", counted)
    r = TableReader(repo / "reftable" / SMALL_TABLE)
    # Git's reflog list reads the log blocks in order and lists every name.
    assert r.log_refnames() == SMALL_LOGS


def test_reflog_list_with_damaged_log_index_matches_git(tmp_path):
    repo = _flipped_small_table(tmp_path, 5693, 0x01)
    p = gitodb("--git-dir", repo, "reflog", "list")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == SMALL_LOGS


def test_every_flip_in_log_index_terminates(tmp_path, monkeypatch):
    data = (SMALL / "reftable" / SMALL_TABLE).read_bytes()
    base = TableReader(data=data)
    calls = 0
    leaf_for = TableReader._leaf_for

    def counted(self, btype, key):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        assert calls < 1000, "log walk does not make progress"
        return leaf_for(self, btype, key)

    monkeypatch.setattr(TableReader, "_leaf_for", counted)
    for off in range(base.log_index_pos, base.footer_pos):
        for bit in (0x01, 0x10, 0x80):
            d = bytearray(data)
            d[off] ^= bit
            calls = 0
            try:
                t = TableReader(data=bytes(d))
                t.log_refnames()
                list(t.iter_logs())
            except ReftableError as e:
                assert e.offset is not None and e.path


# -- 2: empty and header-truncated loose objects ------------------------------------


def _loose_repo(tmp_path: Path, content: bytes = b"hello\n") -> tuple[Path, str, Path]:
    repo = tmp_path / "lr"
    git("init", "-q", repo)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=content).decode().strip()
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.chmod(0o644)
    return repo, oid, path


@pytest.mark.parametrize("keep", [0, 1, 2, 5])
@pytest.mark.parametrize("mode", ["-p", "-t", "-s"])
def test_cut_loose_object_is_a_typed_error(tmp_path, keep, mode):
    repo, oid, path = _loose_repo(tmp_path)
    path.write_bytes(path.read_bytes()[:keep])
    # Git refuses it too (exit 128).
    assert (
        subprocess.run(
            ["git", "cat-file", mode, oid], cwd=repo, env=git_env(), capture_output=True
        ).returncode
        == 128
    )
    p = gitodb("cat-file", mode, oid, cwd=repo)
    assert p.returncode == 128
    # Git 2.55's lines (recorded): the header it cannot find is "too long"
    error = (
        f"error: object file {path.relative_to(repo)} is empty"
        if keep == 0
        else f"error: header for {oid} too long, exceeds 32 bytes"
    )
    fatal = (
        f"fatal: Not a valid object name {oid}"
        if mode == "-p"
        else "fatal: git cat-file: could not get object info"
    )
    assert p.stderr.decode() == f"{error}\n{fatal}\n"


def test_cut_loose_object_library_errors(tmp_path):
    from gitodb.errors import LooseObjectError
    from gitodb.repo import Repository

    repo, oid, path = _loose_repo(tmp_path)
    raw = path.read_bytes()
    for keep in (0, 1, 2, 5):
        path.write_bytes(raw[:keep])
        odb = Repository(repo).odb
        for call in (odb.read, odb.read_header, odb.open_stream):
            with pytest.raises(LooseObjectError) as ei:
                call(bytes.fromhex(oid))
            assert ei.value.path == str(path) and ei.value.offset == keep


# -- 3 and 4: declared sizes beyond 2**63 and beyond what the data can hold ---------


def _bomb(content_len: int, header: bytes = b"") -> bytes:
    """zlib of ``header`` and ``content_len`` zero bytes, built without holding them."""
    from gitodb import compress

    d = compress.Deflater(9)
    parts = [d.compress(header)]
    chunk = bytes(1 << 20)
    left = content_len
    while left > 0:
        parts.append(d.compress(chunk[: min(left, len(chunk))]))
        left -= len(chunk)
    parts.append(d.flush())
    return b"".join(parts)


def _peak_traced(fn) -> int:  # type: ignore[no-untyped-def]
    import tracemalloc

    tracemalloc.start()
    try:
        try:
            fn()
        except GitodbError:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("declared", [1 << 63, (1 << 64) - 1, 1 << 40])
def test_loose_huge_declared_size(tmp_path, declared):
    from gitodb import compress

    repo, oid, path = _loose_repo(tmp_path)
    path.write_bytes(compress.deflate(b"blob %d\0hello\n" % declared))
    p = gitodb("cat-file", "-p", oid, cwd=repo)
    assert p.returncode == 128
    assert "more than its" in one_line(p.stderr)
    p = gitodb("cat-file", "-s", oid, cwd=repo)  # the header alone is fine, as in Git
    assert p.returncode == 0 and p.stdout == b"%d\n" % declared


def test_loose_size_beyond_64_bits(tmp_path):
    from gitodb import compress

    repo, oid, path = _loose_repo(tmp_path)
    path.write_bytes(compress.deflate(b"blob %d\0hello\n" % (1 << 64)))
    for mode in ("-p", "-s"):
        p = gitodb("cat-file", mode, oid, cwd=repo)
        assert p.returncode == 128 and "too large" in one_line(p.stderr)


def test_loose_bomb_is_refused_before_inflating(tmp_path):
    from gitodb.repo import Repository

    repo, oid, path = _loose_repo(tmp_path)
    raw = _bomb(64 << 20, b"blob %d\0" % (1 << 40))  # 64 MiB of zeros in ~64 KiB
    path.write_bytes(raw)
    odb = Repository(repo).odb
    bound = 64 * len(raw) + (1 << 20)
    for call in (odb.read, lambda o: odb.open_stream(o).read()):
        peak = _peak_traced(lambda c=call: c(bytes.fromhex(oid)))
        assert peak < bound, (peak, bound)
    from gitodb.errors import LooseObjectError

    with pytest.raises(LooseObjectError, match="more than its"):
        odb.read(bytes.fromhex(oid))


def _hostile_pack(tmp_path: Path, declared: int, zdata: bytes) -> Path:
    from test_odb_support import PackBuilder

    b = PackBuilder()
    b.add_object(3, b"x", declared_size=declared, zdata=zdata)
    return b.write(tmp_path / "repo" / ".git" / "objects" / "pack")


@pytest.mark.parametrize("declared", [1 << 63, (1 << 64) - 1])
def test_pack_entry_size_beyond_2_63(tmp_path, declared):
    from gitodb import compress

    git("init", "-q", tmp_path / "repo")
    pack = _hostile_pack(tmp_path, declared, compress.deflate(b"x"))
    for args in (["verify-pack", pack], ["index-pack", "--stdin"]):
        p = gitodb(
            *args, cwd=tmp_path / "repo", input=pack.read_bytes() if "--stdin" in args else None
        )
        assert "at offset 12" in one_line(p.stderr)
        # Git refuses the pack as well, with the same status (verify-pack: 1).
        g = subprocess.run(
            ["git", *map(str, args)],
            cwd=tmp_path / "repo",
            env=git_env(),
            input=pack.read_bytes() if "--stdin" in args else None,
            capture_output=True,
        )
        assert p.returncode == g.returncode != 0, (p.returncode, g.returncode)


def test_index_pack_bomb_is_refused_before_inflating(tmp_path):
    from gitodb.objects.format import SHA1
    from gitodb.pack.index_write import IndexPackOptions, index_buffer

    git("init", "-q", tmp_path / "repo")
    z = _bomb(64 << 20)
    pack = _hostile_pack(tmp_path, 1 << 40, z)
    data = pack.read_bytes()
    bound = 64 * len(data) + (1 << 20)
    peak = _peak_traced(
        lambda: index_buffer(
            data, SHA1, IndexPackOptions(threads=1), str(pack), "Indexing objects", None, None
        )
    )
    assert peak < bound, (peak, bound)


# -- 5: standard output full or closed ---------------------------------------------


def _objects_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "objs"
    git("init", "-q", repo)
    for i in range(40):
        (repo / f"f{i}").write_bytes(b"%d\n" % i * 2000)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "c", cwd=repo)
    return repo


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["cat-file", "--batch-all-objects", "--batch-check"],
        ["cat-file", "--batch-all-objects", "--batch"],
        ["cat-file", "-p", "HEAD"],
        ["show-ref"],
        ["for-each-ref"],
    ],
)
def test_stdout_full_is_one_fatal_line(tmp_path, args):
    repo = _objects_repo(tmp_path)
    with open("/dev/full", "wb") as full:
        p = gitodb(*args, cwd=repo, stdout=full.fileno())
        g = subprocess.run(
            ["git", *args], cwd=repo, env=git_env(), stdout=full, stderr=subprocess.PIPE
        )
    assert p.returncode == g.returncode == 128
    assert one_line(p.stderr) == "fatal: write failure on standard output: No space left on device"


@pytest.mark.parametrize(
    "args",
    [
        ["cat-file", "--batch-all-objects", "--batch"],
        ["cat-file", "-p", "HEAD:f1"],
    ],
)
def test_stdout_closed_dies_of_sigpipe_like_git(tmp_path, args):
    import signal

    repo = _objects_repo(tmp_path)
    (repo / "big").write_bytes(os.urandom(1 << 20))
    git("add", "big", cwd=repo)
    git("commit", "-q", "-m", "big", cwd=repo)
    args = [a.replace("HEAD:f1", "HEAD:big") for a in args]
    statuses = []
    for cmd in ([sys.executable, "-m", "gitodb", *args], ["git", *args]):
        proc = subprocess.Popen(
            cmd, cwd=repo, env=git_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read()
        statuses.append((proc.wait(timeout=300), err))
    assert statuses[0] == statuses[1] == (-signal.SIGPIPE, b"")


# -- 6: alternates ------------------------------------------------------------------


def _chain(tmp_path: Path, n: int) -> list[Path]:
    repos = []
    for i in range(n):
        r = tmp_path / f"r{i}"
        git("init", "-q", "--bare", r)
        repos.append(r)
    for a, b in zip(repos, repos[1:], strict=False):
        (a / "objects" / "info" / "alternates").write_text(f"{b / 'objects'}\n")
    return repos


def test_alternates_nesting_depth_like_git(tmp_path):
    repos = _chain(tmp_path, 8)
    ids = [
        git("hash-object", "-w", "--stdin", cwd=r, input=b"in %d\n" % i).decode().strip()
        for i, r in enumerate(repos)
    ]
    for i, oid in enumerate(ids):
        p = gitodb("--git-dir", repos[0], "cat-file", "-p", oid)
        g = subprocess.run(
            ["git", "--git-dir", repos[0], "cat-file", "-p", oid],
            env=git_env(),
            capture_output=True,
        )
        assert (p.returncode, p.stdout) == (g.returncode, g.stdout), i
        lines = p.stderr.decode().splitlines()
        assert lines[0] == (
            f"error: {repos[6] / 'objects'}: ignoring alternate object stores, nesting too deep"
        )
        assert len(lines) == (1 if g.returncode == 0 else 2)
    assert [
        p.returncode
        for p in (
            gitodb("--git-dir", repos[0], "cat-file", "-e", ids[6]),
            gitodb("--git-dir", repos[0], "cat-file", "-e", ids[7]),
        )
    ] == [0, 1]


def test_alternates_file_that_is_a_directory(tmp_path):
    repo, oid, _ = _loose_repo(tmp_path)
    (repo / ".git/objects/info/alternates").mkdir(parents=True)
    p = gitodb("cat-file", "-p", oid, cwd=repo)
    assert p.returncode == 0 and p.stdout == b"hello\n"
    assert one_line(p.stderr, b"warning: ").endswith("alternates': Is a directory")


def test_alternates_with_nul_and_missing_entries(tmp_path):
    repos = _chain(tmp_path, 3)
    one = git("hash-object", "-w", "--stdin", cwd=repos[1], input=b"one\n").decode().strip()
    two = git("hash-object", "-w", "--stdin", cwd=repos[2], input=b"two\n").decode().strip()
    (repos[1] / "objects/info/alternates").unlink()
    (repos[0] / "objects/info/alternates").write_bytes(
        b"%s\0junk\n%s\n%s\n"
        % (
            bytes(repos[1] / "objects"),
            bytes(repos[2] / "objects"),
            bytes(tmp_path / "nonexistent"),
        )
    )
    # Git takes the file's content up to the first NUL: only "one" is reachable.
    for oid, want in ((one, b"one\n"), (two, b"")):
        p = gitodb("--git-dir", repos[0], "cat-file", "-p", oid)
        g = subprocess.run(
            ["git", "--git-dir", repos[0], "cat-file", "-p", oid],
            env=git_env(),
            capture_output=True,
        )
        assert (
            (p.returncode, p.stdout) == (g.returncode, g.stdout) == (128 if not want else 0, want)
        )


def test_missing_alternate_is_git_error_line(tmp_path):
    repo, oid, _ = _loose_repo(tmp_path)
    (repo / ".git/objects/info/alternates").write_text(f"{tmp_path / 'nonexistent'}\n")
    p = gitodb("cat-file", "-p", oid, cwd=repo)
    g = subprocess.run(["git", "cat-file", "-p", oid], cwd=repo, env=git_env(), capture_output=True)
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout) == (0, b"hello\n")
    # Git 2.55's wording (2.39 says "object directory ... does not exist").
    assert one_line(p.stderr, b"error: ") == (
        f"error: unable to normalize alternate object path: {tmp_path / 'nonexistent'}"
    )


# -- 7: a file that shrinks while hash-object reads it ------------------------------

_SHRINK_DRIVER = """
import os, sys
import gitodb.loose.write as w
orig = w.iter_file_chunks
def chunks(fd, start, size, source=None, chunk_size=w.CHUNK_SIZE):
    for i, c in enumerate(orig(fd, start, size, source, chunk_size)):
        yield c
        if i == 0:
            os.truncate(sys.argv[1], 1000)  # another process shrinks the file
w.iter_file_chunks = chunks
from gitodb.cli.main import main
raise SystemExit(main(sys.argv[2:] + [sys.argv[1]]))
"""


@pytest.mark.parametrize(
    "args",
    [
        ["-c", "core.bigFileThreshold=1k", "hash-object", "-w"],
        ["hash-object", "-w"],
        ["hash-object"],
    ],
)
def test_hash_object_file_shrinking_while_read(tmp_path, args):
    repo = tmp_path / "hb"
    git("init", "-q", repo)
    big = repo / "big"
    big.write_bytes(os.urandom(4 << 20))
    before = sorted(p.name for p in (repo / ".git/objects").rglob("*"))
    p = subprocess.run(
        [sys.executable, "-c", _SHRINK_DRIVER, "big", *args],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        timeout=300,
    )
    assert p.returncode == 128, p
    lines = p.stderr.decode().splitlines()
    assert lines == [
        f"error: failed to read {4 << 20} bytes from 'big'",
        "fatal: Unable to add big to database" if "-w" in args else "fatal: Unable to hash big",
    ]
    # No partial pack, loose object or temporary file is left.
    assert sorted(p.name for p in (repo / ".git/objects").rglob("*")) == before


# -- 8: an object larger than memory ------------------------------------------------

_OOM_DRIVER = """
import sys
from gitodb import compress
def inflate(data, size):
    raise MemoryError()  # what a backend raises when the buffer cannot be had
compress.set_backend = lambda name: None
compress.inflate = inflate
class Inflater(compress.Inflater):
    def decompress(self, data, max_length=0):
        if max_length > 64:  # past the header peek: the object's buffer
            raise MemoryError()
        return super().decompress(data, max_length)
compress.new_inflater = Inflater
from gitodb.cli.main import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_out_of_memory_is_gits_fatal_line(tmp_path):
    from helpers import make_pack

    pack = make_pack(tmp_path)
    repo = pack.parents[3]
    loose = git("hash-object", "-w", "--stdin", cwd=repo, input=b"x" * 5000).decode().strip()
    packed = git("rev-parse", "HEAD:f3.txt", cwd=repo).decode().strip()
    size = int(git("cat-file", "-s", packed, cwd=repo))
    for oid, want in ((loose, 5000), (packed, size)):
        p = subprocess.run(
            [sys.executable, "-c", _OOM_DRIVER, "cat-file", "-p", oid],
            cwd=repo,
            env=git_env(),
            capture_output=True,
            timeout=300,
        )
        assert p.returncode == 128
        assert one_line(p.stderr) == (
            f"fatal: Out of memory, malloc failed (tried to allocate {want} bytes)"
        )


def test_memory_error_anywhere_is_one_fatal_line(tmp_path, monkeypatch, capsys):
    from gitodb.cli import main as cli_main
    from gitodb.cli import version

    def boom(argv, ctx):  # type: ignore[no-untyped-def]
        raise MemoryError()

    monkeypatch.setattr(version, "run", boom)
    assert cli_main.main(["version"]) == 128
    assert capsys.readouterr().err == "fatal: Out of memory, malloc failed\n"


# -- 9: config values Git rejects --------------------------------------------------


def _commit_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "cf"
    git("init", "-q", repo)
    (repo / "f").write_text("x\n")
    git("add", "f", cwd=repo)
    git("commit", "-q", "-m", "c", cwd=repo)
    return repo


GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
_NUM = "fatal: bad numeric config value '{}' for 'core.deltabasecachelimit'{}: {}\n"
_BOOL = "fatal: bad boolean config value '{}' for '{}'\n"
_MISSING = "error: missing value for 'core.logallrefupdates'\nfatal: {}\n"


def _against_255(args: list[str], cwd: Path, want: tuple[int, str]) -> None:
    """Recorded from Git 2.55 (2.39 words some differently); checked live when present."""
    if GIT_255.exists():
        g = subprocess.run([GIT_255, *args], cwd=cwd, env=git_env(), capture_output=True)
        assert (g.returncode, g.stderr.decode()) == want


@pytest.mark.parametrize(
    "setting, want",
    [
        ("core.deltaBaseCacheLimit=-1", (128, _NUM.format("-1", "", "invalid unit"))),
        ("core.deltaBaseCacheLimit=abc", (128, _NUM.format("abc", "", "invalid unit"))),
        ("core.deltaBaseCacheLimit=", (128, _NUM.format("", "", "invalid unit"))),
        ("core.deltaBaseCacheLimit", (128, _NUM.format("", "", "invalid unit"))),
        ("core.deltaBaseCacheLimit=0x10k", (0, "")),
        ("core.logAllRefUpdates=bogus", (128, _BOOL.format("bogus", "core.logallrefupdates"))),
        (
            "core.logAllRefUpdates",
            (
                128,
                _MISSING.format("unable to parse 'core.logallrefupdates' from command-line config"),
            ),
        ),
        ("core.logAllRefUpdates=always", (0, "")),
        ("core.logAllRefUpdates=", (0, "")),
        ("core.bare=yesno", (128, _BOOL.format("yesno", "core.bare"))),
    ],
)
def test_bad_core_config_on_command_line_like_git(tmp_path, setting, want):
    repo = _commit_repo(tmp_path)
    p = gitodb("-c", setting, "cat-file", "-p", "HEAD", cwd=repo)
    assert (p.returncode, p.stderr.decode()) == want
    _against_255(["-c", setting, "cat-file", "-p", "HEAD"], repo, want)


@pytest.mark.parametrize(
    "line, git_dir, want",
    [
        (
            "deltaBaseCacheLimit = 1q",
            None,
            _NUM.format("1q", " in file .git/config", "invalid unit"),
        ),
        (
            "deltaBaseCacheLimit = 1q",
            ".git",
            _NUM.format("1q", " in file .git/config", "invalid unit"),
        ),
        (
            "deltaBaseCacheLimit = 1q",
            "GITDIR",
            _NUM.format("1q", " in file GITDIR/config", "invalid unit"),
        ),
        (
            "deltaBaseCacheLimit = 99999999999999999999g",
            None,
            _NUM.format("99999999999999999999g", " in file .git/config", "out of range"),
        ),
        (
            "logallrefupdates",
            None,
            _MISSING.format(
                "bad config variable 'core.logallrefupdates' in file '.git/config' at line 7"
            ),
        ),
    ],
)
def test_bad_core_config_in_file_names_the_file_like_git(tmp_path, line, git_dir, want):
    repo = _commit_repo(tmp_path)
    with open(repo / ".git/config", "a") as f:
        f.write(f"[core]\n\t{line}\n")
    assert len((repo / ".git/config").read_text().splitlines()) == 7
    if git_dir == "GITDIR":
        git_dir = str(repo / ".git")
        want = want.replace("GITDIR", git_dir)
    opts = ["--git-dir", git_dir] if git_dir else []
    p = gitodb(*opts, "cat-file", "-p", "HEAD", cwd=repo)
    assert (p.returncode, p.stderr.decode()) == (128, want)
    _against_255([*opts, "cat-file", "-p", "HEAD"], repo, (128, want))


def test_typed_getters_like_git():
    from gitodb.errors import ConfigError
    from gitodb.repo.config import Config

    c = Config()
    c.apply_overrides(
        [
            "core.filesRefLockTimeout=abc",
            "a.empty=",
            "a.bare",
            "a.hex=0x10",
            "a.oct=010",
            "a.big=3g",
            "a.neg=-1",
            "a.space= 5",
            "a.trail=5 ",
            "a.num=2",
            "a.always=always",
        ]
    )
    with pytest.raises(
        ConfigError,
        match="^bad numeric config value 'abc' for 'core.filesreflocktimeout': invalid unit$",
    ):
        c.get_int("core.filesRefLockTimeout", 100)
    assert c.get_bool("a.empty", True) is False  # Git: -c key= is false
    assert c.get_bool("a.bare") is True  # -c key (no =) is true
    assert c.get_bool("a.num") is True
    assert (c.get_int("a.hex", 0), c.get_int("a.oct", 0), c.get_int("a.space", 0)) == (16, 8, 5)
    assert c.get_ulong("a.big", 0) == 3 << 30
    for key, getter, why in (
        ("a.big", c.get_int, "out of range"),
        ("a.neg", c.get_ulong, "invalid unit"),
        ("a.trail", c.get_int, "invalid unit"),
    ):
        with pytest.raises(ConfigError, match=why):
            getter(key, 0)
    assert c.get_bool_or_str("a.always", ("always",)) == "always"
    assert c.get_bool_or_str("a.empty", ("always",), True) is False
    with pytest.raises(ConfigError, match="bad boolean config value 'abc'"):
        c.get_bool_or_str("core.filesreflocktimeout", ("always",))


def test_empty_log_all_ref_updates_is_false(tmp_path):
    repo = _commit_repo(tmp_path)
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        name = f"refs/heads/{'g' if cmd == ['git'] else 'o'}"
        subprocess.run(
            [*cmd, "-c", "core.logAllRefUpdates=", "update-ref", name, "HEAD"],
            cwd=repo,
            env=git_env(),
            check=True,
            timeout=300,
        )
    assert not (repo / ".git/logs/refs/heads/g").exists()
    assert not (repo / ".git/logs/refs/heads/o").exists()


# -- 10: repository format version and extensions ------------------------------------


def _with_extensions(tmp_path: Path, version: int, *lines: str) -> Path:
    repo = _commit_repo(tmp_path)
    cfg = repo / ".git/config"
    text = cfg.read_text().replace(
        "repositoryformatversion = 0", f"repositoryformatversion = {version}"
    )
    cfg.write_text(text + "[extensions]\n" + "".join(f"\t{x}\n" for x in lines))
    return repo


@pytest.mark.parametrize(
    "version, lines, want",
    [
        (1, ["foo = bar"], "fatal: unknown repository extension found:\n\tfoo\n"),
        (
            1,
            ["foo = bar", "baz = 1"],
            "fatal: unknown repository extensions found:\n\tfoo\n\tbaz\n",
        ),
        (0, ["foo = bar"], ""),
        (0, ["noop = true"], ""),
        (1, ["noop = true"], ""),
        (1, ["noop-v1"], ""),
        (
            0,
            ["noop-v1 = true"],
            "fatal: repo version is 0, but v1-only extension found:\n\tnoop-v1\n",
        ),
        (0, ["preciousObjects = true"], ""),
        (1, ["partialClone = origin"], ""),
        (
            0,
            ["refStorage = reftable"],
            "fatal: repo version is 0, but v1-only extension found:\n\trefstorage\n",
        ),
        (
            1,
            ["objectFormat = bogus"],
            "error: invalid value for 'extensions.objectformat': 'bogus'\n"
            "fatal: bad config line 7 in file .git/config\n",
        ),
        (2, [], "fatal: Expected git repo version <= 1, found 2\n"),
    ],
)
def test_repository_extensions_like_git(tmp_path, version, lines, want):
    repo = _with_extensions(tmp_path, version, *lines)
    for args in (["cat-file", "-p", "HEAD"], ["update-ref", "refs/heads/x", "HEAD"]):
        p = gitodb(*args, cwd=repo)
        assert (p.returncode, p.stderr.decode()) == (128 if want else 0, want)
        _against_255(args, repo, (128 if want else 0, want))
    if want:
        assert not (repo / ".git/refs/heads/x").exists()  # nothing written


def test_compat_object_format_is_read_and_written(tmp_path):
    # Objects are stored in the main format; each one written gets its second id in
    # objects/loose-object-idx as Git 2.55 keeps it (see tests/test_compat_objects.py).
    repo = _with_extensions(tmp_path, 1, "compatObjectFormat = sha256")
    p = gitodb("cat-file", "-t", "HEAD", cwd=repo)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"commit\n", b"")
    (repo / "new").write_bytes(b"new content\n")
    p = gitodb("hash-object", "-w", "new", cwd=repo)
    assert p.returncode == 0, p.stderr
    want = hashlib.sha256(b"blob 12\0new content\n").hexdigest()
    assert (repo / ".git/objects/loose-object-idx").read_text().splitlines() == [
        "# loose-object-idx",
        f"{p.stdout.decode().strip()} {want}",
    ]


def test_worktree_config_is_read(tmp_path):
    repo = _with_extensions(tmp_path, 1, "worktreeConfig = true")
    (repo / ".git/config.worktree").write_text("[core]\n\tdeltaBaseCacheLimit = 1q\n")
    p = gitodb("cat-file", "-p", "HEAD", cwd=repo)
    assert p.returncode == 128 and b"'1q' for 'core.deltabasecachelimit'" in p.stderr


# -- 11: a damaged .rev is ignored, as Git does ---------------------------------------


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: d[:-1] + bytes([d[-1] ^ 1]), None),  # checksum: Git does not even look
        (lambda d: d[:20] + bytes([d[20] ^ 1]) + d[21:], None),  # an entry (checksum fails)
        (lambda d: bytes([d[0] ^ 1]) + d[1:], "has unknown signature"),
        (lambda d: d[:-3], "is corrupt"),
        (lambda d: d[:20], "is too small"),
    ],
)
def test_damaged_rev_is_recomputed(tmp_path, damage, message):
    from helpers import make_pack

    pack = make_pack(tmp_path, "sha1", "-c", "pack.writeReverseIndex=true")
    repo = pack.parents[3]
    rev = pack.with_suffix(".rev")
    assert rev.exists()
    args = ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize:disk)"]
    want = git(*args, cwd=repo)
    rev.chmod(0o644)
    rev.write_bytes(damage(rev.read_bytes()))
    p = gitodb(*args, cwd=repo)
    assert p.returncode == 0 and p.stdout == want
    if message is None:
        assert p.stderr == b""
    else:
        assert one_line(p.stderr, b"error: ").startswith(
            f"error: reverse-index file {rev} {message}"
        )
    # the pack is readable object by object too
    oid = want.split()[0].decode()
    assert gitodb("cat-file", "-p", oid, cwd=repo).stdout == git("cat-file", "-p", oid, cwd=repo)


# -- 12: errors name the damaged entry ------------------------------------------------


def test_corrupt_delta_is_reported_at_its_own_offset(tmp_path):
    from gitodb.objects.format import SHA1
    from gitodb.pack.reader import DeltaBaseCache, PackFile
    from helpers import make_pack

    pack = make_pack(tmp_path)
    data = pack.read_bytes()
    p = PackFile(pack, SHA1)
    deltas = [off for _oid, off in p.iter_pack_order() if p.delta_base_at(off) is not None]
    ends = {off: p.entry_end(off) for off in deltas}
    p.close()
    assert len(deltas) > 10
    for off in deltas:
        d = bytearray(data)
        d[min((off + ends[off]) // 2 + 3, ends[off] - 1)] ^= 0x55
        bad = tmp_path / "bad.pack"
        bad.write_bytes(bytes(d))
        (tmp_path / "bad.idx").write_bytes(pack.with_suffix(".idx").read_bytes())
        q = PackFile(bad, SHA1, cache=DeltaBaseCache())
        with pytest.raises(GitodbError) as ei:
            q.read_at(off)  # its base chain is intact: only this entry is damaged
        assert (ei.value.path, ei.value.offset) == (str(bad), off)
        q.close()


def test_missing_delta_base_names_pack_and_offset(tmp_path):
    from gitodb.errors import DeltaError
    from gitodb.repo import Repository
    from test_odb_support import PackBuilder, make_delta

    git("init", "-q", tmp_path / "repo")
    b = PackBuilder()
    missing = b"\x42" * 20
    b.add_object(3, b"padding blob\n")
    off = b.add_ref_delta(missing, make_delta(5, 3, [b"abc"]), oid=b"\x43" * 20)
    pack = b.write(tmp_path / "repo/.git/objects/pack")
    odb = Repository(tmp_path / "repo").odb
    for call in (odb.read, odb.read_header):
        with pytest.raises(DeltaError) as ei:
            call(b"\x43" * 20)
        assert ei.value.message == f"delta base {missing.hex()} is missing"
        assert (ei.value.path, ei.value.offset) == (str(pack), off)


def test_delta_accelerator_agrees_with_reference():
    import random

    from gitodb.errors import DeltaError
    from gitodb.pack import delta as delta_mod
    from test_odb_support import make_delta

    if delta_mod._c_apply_delta is None:
        pytest.skip("built without the C accelerator")
    rng = random.Random(5)
    base = bytes(rng.randrange(256) for _ in range(300))
    good = make_delta(len(base), 200, [("copy", 10, 100), b"x" * 50, ("copy", 0, 50)])
    for _ in range(3000):
        d = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            op = rng.randrange(3)
            if op == 0 and d:
                d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
            elif op == 1 and d:
                del d[rng.randrange(len(d)) :]
            else:
                d.insert(rng.randrange(len(d) + 1), rng.randrange(256))
        got = []
        for f in (delta_mod.apply_delta, delta_mod.apply_delta_python):
            try:
                got.append(f(base, bytes(d), path="p", offset=7))
            except DeltaError as e:
                got.append((e.message, e.path, e.offset))
        assert got[0] == got[1]


# -- a pack that cannot be opened is not fatal (t5313) -------------------------------


def test_unopenable_pack_objects_are_missing_not_fatal(tmp_path):
    repo = tmp_path / "bc"
    git("init", "-q", repo)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=b"content\n").decode().strip()
    name = (
        git("pack-objects", ".git/objects/pack/pack", cwd=repo, input=oid.encode() + b"\n")
        .decode()
        .strip()
    )
    (repo / ".git/objects" / oid[:2] / oid[2:]).unlink()
    pack = repo / f".git/objects/pack/pack-{name}.pack"
    idx = pack.with_suffix(".idx")
    for p in (pack, idx):
        p.chmod(0o644)
    data = bytearray(pack.read_bytes())
    data[8:12] = b"\xff\0\0\0"  # the pack claims other objects than its index
    pack.write_bytes(bytes(data))
    args = ["cat-file", "--batch-all-objects", "--batch-check"]
    p = gitodb(*args, cwd=repo)
    assert (p.returncode, p.stdout) == (0, f"{oid} missing\n".encode())
    assert p.stdout == git(*args, cwd=repo)
    assert p.stderr.startswith(b"error: packfile claims 4278190080 objects")
    assert gitodb("cat-file", "blob", oid, cwd=repo).returncode == 128
    # an index that is itself unsound: its pack is not even listed
    data = bytearray(idx.read_bytes())
    data[1020:1024] = b"\xff\0\0\0"
    idx.write_bytes(bytes(data))
    p = gitodb(*args, cwd=repo)
    assert (p.returncode, p.stdout) == (0, b"")
    assert p.stderr.startswith(b"error: index file has a non-monotonic fan-out table")


# -- recovery from a damaged pack entry through another copy (t5303) -----------------


def _delta_chain_repo(tmp_path: Path) -> tuple[Path, Path, list[str], list[Path]]:
    repo = tmp_path / "rc"
    git("init", "-q", repo)
    base = b"".join(b"line %d of a file that deltas well\n" % i for i in range(60))
    files, oids = [], []
    for i, extra in enumerate((b"", b"one more line\n", b"and another line\n")):
        f = repo / f"file_{i + 1}"
        f.write_bytes(base + extra * (i + 1))
        files.append(f)
        oids.append(git("hash-object", "-w", f, cwd=repo).decode().strip())
    name = (
        git(
            "pack-objects",
            "--window=10",
            ".git/objects/pack/pack",
            cwd=repo,
            input="".join(o + "\n" for o in oids).encode(),
        )
        .decode()
        .strip()
    )
    git("prune-packed", cwd=repo)
    pack = repo / f".git/objects/pack/pack-{name}.pack"
    pack.chmod(0o644)
    return repo, pack, oids, files


def test_damaged_base_recovered_from_loose_copy(tmp_path):
    from gitodb.objects.format import SHA1
    from gitodb.pack.reader import PackFile

    repo, pack, oids, files = _delta_chain_repo(tmp_path)
    p = PackFile(pack, SHA1)
    offsets = {o: p.find(bytes.fromhex(o)) for o in oids}
    bases = {o: p.delta_base_at(offsets[o]) for o in oids}
    p.close()
    full = [o for o in oids if bases[o] is None]
    assert full and any(bases.values())
    data = bytearray(pack.read_bytes())
    data[offsets[full[0]]] = 0  # the full object's header: type 0, unreadable
    pack.write_bytes(bytes(data))
    for o in oids:  # Git fails them all (every delta leads to the damaged base)...
        assert gitodb("cat-file", "blob", o, cwd=repo).returncode == 128
    # ...but with a loose copy of the damaged object, every object is readable again
    idx = pack.with_suffix(".idx")
    idx.rename(tmp_path / "idx")
    git("hash-object", "-w", files[oids.index(full[0])], cwd=repo)
    (tmp_path / "idx").rename(idx)
    for o, f in zip(oids, files, strict=True):
        p2 = gitodb("cat-file", "blob", o, cwd=repo)
        assert (p2.returncode, p2.stdout) == (0, f.read_bytes()), o
        assert b"Traceback" not in p2.stderr


@pytest.mark.parametrize("keep", [0, 2])
@pytest.mark.parametrize("mode", ["--batch-check", "--batch"])
def test_batch_reports_unreadable_loose_object_missing_like_git(tmp_path, keep, mode):
    repo, oid, path = _loose_repo(tmp_path)
    other = git("hash-object", "-w", "--stdin", cwd=repo, input=b"fine\n").decode().strip()
    path.write_bytes(path.read_bytes()[:keep])
    stdin = f"{oid}\n{other}\n".encode()
    p = gitodb("cat-file", mode, cwd=repo, input=stdin)
    g = subprocess.run(
        ["git", "cat-file", mode], cwd=repo, input=stdin, env=git_env(), capture_output=True
    )
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout) == (0, g.stdout)
    assert g.stdout.startswith(f"{oid} missing\n".encode())
    assert one_line(p.stderr, b"error: ")


@pytest.mark.parametrize(
    "header, fatal",
    [
        (b"blob 18446744073709551616\0hello\n", True),  # Git: size_t overflow, even in batch
        (b"bogus 6\0hello\n", True),  # Git: invalid object type, even in batch
        (b"blo\x00\x01 6\0hello\n", False),  # does not parse: error line, "missing"
        (b"blob 6x\0hello\n", False),
    ],
)
def test_batch_check_on_bad_loose_headers_like_git(tmp_path, header, fatal):
    from gitodb import compress

    repo, oid, path = _loose_repo(tmp_path)
    path.write_bytes(compress.deflate(header))
    p = gitodb("cat-file", "--batch-check", cwd=repo, input=f"{oid}\n".encode())
    g = subprocess.run(
        ["git", "cat-file", "--batch-check"],
        cwd=repo,
        env=git_env(),
        input=f"{oid}\n".encode(),
        capture_output=True,
    )
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)
    assert p.returncode == (128 if fatal else 0)


def test_show_ref_prints_a_damaged_name_as_git_does(tmp_path):
    # a reftable key damaged to hold NULs: Git prints the name up to the first one
    repo = tmp_path / "rt"
    shutil.copytree(SMALL, repo)
    table = repo / "reftable" / SMALL_TABLE
    table.chmod(0o644)
    data = bytearray(table.read_bytes())
    at = data.index(b"release/0.3") + 1
    data[at : at + 3] = b"\0\0\0"
    table.write_bytes(bytes(data))
    p = gitodb("--git-dir", repo, "show-ref")
    assert p.returncode == 0
    assert b"refs/heads/r\n" in p.stdout and b"\0" not in p.stdout
    _against_255(["--git-dir", str(repo), "show-ref"], repo, (0, ""))


# -- blanks as Git reads them (found by the hostile-input suite at scale 4) --------------


def _one_commit(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git(
        "-c",
        "user.name=a",
        "-c",
        "user.email=b",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "c",
        cwd=repo,
    )
    return repo, git("rev-parse", "HEAD", cwd=repo).decode().strip()


def _both(repo: Path, *args: str) -> tuple[int, int]:
    ours = subprocess.run(
        [sys.executable, "-m", "gitodb", *args], cwd=repo, capture_output=True, env=git_env()
    )
    theirs = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
    assert b"Traceback" not in ours.stderr
    return ours.returncode, theirs.returncode


def test_vertical_tab_after_a_loose_ref_id_is_broken_like_git(tmp_path: Path) -> None:
    repo, head = _one_commit(tmp_path)
    (repo / ".git/refs/heads/v").write_bytes(head.encode() + b"\v")
    assert _both(repo, "show-ref") == (128, 128)


def test_config_value_ends_at_a_nul_like_git(tmp_path: Path) -> None:
    # Git keeps values as C strings: "\0 true" is "" (false), not a bad boolean.
    repo, _head = _one_commit(tmp_path)
    with open(repo / ".git/config", "ab") as f:
        f.write(b"[core]\n\tfilemode = \0 true\n")
    assert _both(repo, "cat-file", "-t", "HEAD") == (0, 0)


def test_alternates_entries_are_taken_as_written(tmp_path: Path) -> None:
    # Only \n separates entries and no blank is stripped: "<path>\v" names no directory.
    repo, _head = _one_commit(tmp_path)
    other, _ = _one_commit(tmp_path / "o")
    blob = git("hash-object", "-w", "--stdin", cwd=other, input=b"only there\n").decode().strip()
    alternates = repo / ".git/objects/info/alternates"
    alternates.write_bytes(str(other / ".git/objects").encode() + b"\v\n")
    assert _both(repo, "cat-file", "-t", blob) == (128, 128)
    alternates.write_bytes(str(other / ".git/objects").encode() + b"\n")
    assert _both(repo, "cat-file", "-t", blob) == (0, 0)
