"""``GIT_TRACE2_EVENT``: the process events and the fsync counters Git writes at exit.

Counts are compared with the ``git`` on PATH (2.39 reports them as ``data``
events, 2.55 as ``counter`` events: the numbers are the same); the reftable
numbers are Git 2.55's for t0610's two fsync tests, recorded here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"
FSYNC = ["-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync"]


def _env(trace: Path | str, **extra: str) -> dict[str, str]:
    env = git_env()
    env["GIT_TRACE2_EVENT"] = str(trace)
    env["GIT_TEST_FSYNC"] = "true"
    env.update(extra)
    return env


def _gitodb(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args], cwd=cwd, env=env, capture_output=True, check=False
    )


def _events(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def _gitodb_counts(trace: Path) -> dict[str, int]:
    return {
        str(e["name"]): int(str(e["count"]))
        for e in _events(trace)
        if e["event"] == "counter" and e["category"] == "fsync"
    }


def _git_counts(trace: Path) -> dict[str, int]:
    """Git 2.39's ``data`` events ``fsync/<name>`` (2.55 turned them into counters)."""
    out = {}
    for e in _events(trace):
        if e["event"] == "data" and e.get("category") == "fsync":
            value = int(str(e["value"]))
            if value:
                out[str(e["key"]).removeprefix("fsync/")] = value
        elif e["event"] == "counter" and e.get("category") == "fsync":
            out[str(e["name"])] = int(str(e["count"]))
    return out


def _repo(path: Path) -> None:
    git("init", "-q", "-b", "main", path)
    (path / "a").write_text("a\n")
    git("add", "a", cwd=path)
    git("commit", "-q", "-m", "initial", cwd=path)
    git("tag", "initial", cwd=path)


@pytest.mark.parametrize(
    "args",
    [
        ["update-ref", "refs/heads/branch", "HEAD"],
        ["pack-refs", "--all"],
        ["update-ref", "-d", "refs/tags/initial"],
        ["symbolic-ref", "refs/heads/sym", "refs/heads/main"],
    ],
)
@pytest.mark.parametrize("method", ["fsync", "writeout-only"])
def test_fsync_counts_match_git(tmp_path: Path, args: list[str], method: str) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    _repo(mine)
    _repo(theirs)
    config = ["-c", "core.fsync=all", "-c", f"core.fsyncMethod={method}"]
    t_git, t_mine = tmp_path / "git.txt", tmp_path / "mine.txt"
    subprocess.run(["git", *config, *args], cwd=theirs, env=_env(t_git), check=True)
    proc = _gitodb(mine, _env(t_mine), *config, *args)
    assert proc.returncode == 0, proc.stderr
    assert _gitodb_counts(t_mine) == _git_counts(t_git)


def test_no_counter_without_syncs(tmp_path: Path) -> None:
    _repo(tmp_path)
    trace = tmp_path / "t.txt"
    env = _env(trace, GIT_TEST_FSYNC="0")
    assert _gitodb(tmp_path, env, *FSYNC, "update-ref", "refs/heads/b", "HEAD").returncode == 0
    names = [e["event"] for e in _events(trace)]
    assert names == ["version", "start", "cmd_name", "exit", "atexit"]


def test_event_shape(tmp_path: Path) -> None:
    _repo(tmp_path)
    trace = tmp_path / "t.txt"
    env = _env(trace, GIT_TRACE2_PARENT_SID="parent-sid")
    proc = _gitodb(tmp_path, env, *FSYNC, "update-ref", "refs/heads/b", "nosuchref")
    assert proc.returncode == 128
    events = _events(trace)
    assert [e["event"] for e in events] == ["version", "start", "cmd_name", "exit", "atexit"]
    sid = str(events[0]["sid"])
    assert re.fullmatch(r"parent-sid/\d{8}T\d{6}\.\d{6}Z-H[0-9a-f]{8}-P[0-9a-f]{8}", sid)
    assert all(e["sid"] == sid and e["thread"] == "main" for e in events)
    assert events[0]["evt"] == "4"
    argv = events[1]["argv"]
    assert isinstance(argv, list) and argv[1:] == [
        *FSYNC,
        "update-ref",
        "refs/heads/b",
        "nosuchref",
    ]
    assert events[2]["name"] == events[2]["hierarchy"] == "update-ref"
    assert events[3]["code"] == events[4]["code"] == 128
    # appended to, as Git appends
    assert _gitodb(tmp_path, env, "show-ref", "-q", "--verify", "refs/heads/nope").returncode == 1
    assert len(_events(trace)) == 10


def test_targets(tmp_path: Path) -> None:
    _repo(tmp_path)
    args = (*FSYNC, "update-ref", "refs/heads/b", "HEAD")
    proc = _gitodb(tmp_path, _env("1"), *args)
    assert [json.loads(x)["event"] for x in proc.stderr.splitlines()][-2:] == ["counter", "atexit"]
    folder = tmp_path / "traces"
    folder.mkdir()
    assert _gitodb(tmp_path, _env(folder), *args).returncode == 0
    (one,) = folder.iterdir()
    assert _gitodb_counts(one) == {"hardware-flush": 1}
    for off in ("0", "false", "relative/path"):
        proc = _gitodb(tmp_path, _env(off), *args)
        assert proc.returncode == 0 and not proc.stderr
        assert not (tmp_path / "relative").exists()


def _git255_env(trace: Path) -> dict[str, str]:
    env = _env(trace)
    env["PATH"] = f"{GIT255.parent}{os.pathsep}{env['PATH']}"
    return env


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55 for a reftable repository")
@pytest.mark.parametrize(
    ("args", "expected"),
    # t0610-reftable-basics "ref transaction: writes are synced" and "packed-refs:
    # writes are synced": Git 2.55 reports 4 (new table and list, then the
    # auto-compacted table and list) and 2.
    [(["update-ref", "refs/heads/branch", "HEAD"], 4), (["pack-refs"], 2)],
)
def test_reftable_counts_are_gits(tmp_path: Path, args: list[str], expected: int) -> None:
    env = _git255_env(tmp_path / "setup.txt")
    del env["GIT_TRACE2_EVENT"]
    run = {"cwd": tmp_path, "env": env, "check": True}
    subprocess.run([str(GIT255), "init", "-q", "--ref-format=reftable", "repo"], **run)  # type: ignore[call-overload]
    repo = tmp_path / "repo"
    run["cwd"] = repo
    subprocess.run([str(GIT255), "config", "maintenance.auto", "false"], **run)  # type: ignore[call-overload]
    (repo / "a").write_text("a\n")
    subprocess.run([str(GIT255), "add", "a"], **run)  # type: ignore[call-overload]
    subprocess.run([str(GIT255), "commit", "-q", "-m", "initial"], **run)  # type: ignore[call-overload]
    subprocess.run([str(GIT255), "tag", "initial"], **run)  # type: ignore[call-overload]
    assert len((repo / ".git" / "reftable" / "tables.list").read_text().split()) == 2
    config = ["-c", "core.fsync=reference", "-c", "core.fsyncMethod=fsync"]
    trace = tmp_path / "t.txt"
    proc = _gitodb(repo, _env(trace), *config, *args)
    assert proc.returncode == 0, proc.stderr
    assert _gitodb_counts(trace) == {"hardware-flush": expected}


def test_writeout_attempt_is_counted_where_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git counts a write-out attempt even where ``sync_file_range`` is missing,
    then the fsync it falls back to."""
    from gitodb import durable, trace2

    monkeypatch.setattr(durable, "_SYNC_FILE_RANGE", False)
    monkeypatch.delenv("GIT_TEST_FSYNC", raising=False)
    trace2.reset()
    policy = durable.FsyncPolicy(
        components=durable.Component.REFERENCE, method=durable.Method.WRITEOUT_ONLY
    )
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        policy.sync(durable.Component.REFERENCE, fd, str(path))
    finally:
        os.close(fd)
    assert trace2.counters() == {("fsync", "writeout-only"): 1, ("fsync", "hardware-flush"): 1}
    trace2.reset()


def _bitmap_repo(tmp_path: Path) -> Path:
    r = tmp_path / "r"
    git("init", "-q", r)
    for i in range(3):
        (r / "f").write_text(f"{i}\n")
        git("add", "f", cwd=r)
        git("commit", "-q", "-m", f"c{i}", cwd=r)
    git("repack", "-q", "-a", "-d", cwd=r)
    return r


def _wanted(trace: Path, event: str) -> list[dict[str, object]]:
    return [e for e in _events(trace) if e["event"] == event]


@pytest.mark.parametrize("source", ["midx", "rev"])
def test_where_the_midx_reverse_index_came_from(tmp_path: Path, source: str) -> None:
    # t5326 greps this data event: "midx" when the RIDX chunk is read, "rev" for the
    # multi-pack-index-<checksum>.rev that GIT_TEST_MIDX_WRITE_REV=1 writes beside it
    # and GIT_TEST_MIDX_READ_RIDX=0 reads instead
    r = _bitmap_repo(tmp_path)
    knobs = {"GIT_TEST_MIDX_WRITE_REV": "1", "GIT_TEST_MIDX_READ_RIDX": "0"}
    knobs = knobs if source == "rev" else {}
    write_env = {**git_env(), **knobs}
    assert _gitodb(r, write_env, "multi-pack-index", "write", "--bitmap").returncode == 0
    revs = list((r / ".git/objects/pack").glob("multi-pack-index-*.rev"))
    assert len(revs) == (1 if source == "rev" else 0)
    trace = tmp_path / "trace"
    got = _gitodb(r, _env(trace, **knobs), "rev-list", "--test-bitmap", "HEAD")
    assert got.returncode == 0, got.stderr
    data = [(e["category"], e["key"], e["value"]) for e in _wanted(trace, "data")]
    assert ("load_midx_revindex", "source", source) in data
    text = trace.read_text()
    assert f'"category":"load_midx_revindex","key":"source","value":"{source}"' in text
    if source == "rev" and GIT255.exists():
        # Git reads the file gitodb wrote
        check = subprocess.run(
            [GIT255, "rev-list", "--test-bitmap", "HEAD"], cwd=r, env=write_env, capture_output=True
        )
        assert check.returncode == 0 and b"OK!" in check.stderr + check.stdout


def test_bitmap_lookup_table_write_is_a_region(tmp_path: Path) -> None:
    r = _bitmap_repo(tmp_path)
    trace = tmp_path / "trace"
    got = _gitodb(
        r,
        _env(trace),
        "-c",
        "pack.writeBitmapLookupTable=true",
        "multi-pack-index",
        "write",
        "--bitmap",
    )
    assert got.returncode == 0, got.stderr
    enter = _wanted(trace, "region_enter")
    leave = _wanted(trace, "region_leave")
    assert [(e["category"], e["label"]) for e in enter] == [
        ("pack-bitmap-write", "writing_lookup_table")
    ]
    assert [e["label"] for e in leave] == ["writing_lookup_table"]
    assert enter[0]["nesting"] == 1 and leave[0]["nesting"] == 1
    # nothing is recorded when the table is not written
    trace.unlink()
    assert _gitodb(r, _env(trace), "multi-pack-index", "write", "--bitmap").returncode == 0
    assert not _wanted(trace, "region_enter")


@pytest.mark.parametrize("thin", [False, True])
def test_index_pack_progress_regions_are_gits(tmp_path: Path, thin: bool) -> None:
    """Each progress meter of ``index-pack -v`` is a ``progress`` region with its
    ``total_objects`` (Git's ``start_progress``/``stop_progress``; t5316 counts them),
    once per meter even where the meter is reported again."""
    repo = tmp_path / "r"
    git("init", "-q", repo)
    base = os.urandom(4096).hex().encode()
    trees = []
    for i in range(2):
        (repo / "file").write_bytes(base + b"%d\n" % i)
        git("add", "file", cwd=repo)
        git("commit", "-q", "-m", str(i), cwd=repo)
        trees.append(git("rev-parse", "HEAD^{tree}", "HEAD:file", cwd=repo).split())
    # as t5316: the old tree a preferred base, so the blob is a delta against
    # one that is not in the pack (thin)
    spec = b"%s\n%s file\n" % (trees[1][0], trees[1][1])
    if thin:
        spec = b"-%s\n" % trees[0][0] + spec
    pack = git("pack-objects", "--stdout", cwd=repo, input=spec)
    args = ["index-pack", "-v", "--stdin", *(["--fix-thin"] if thin else [])]
    got = []
    for name, cmd in (("git", ["git"]), ("gitodb", [sys.executable, "-m", "gitodb"])):
        trace = tmp_path / f"{name}.trace"
        fresh = tmp_path / name
        git("clone", "-q", "--bare", repo, fresh)
        subprocess.run(
            [*cmd, *args], cwd=fresh, env=_env(trace), input=pack, capture_output=True, check=True
        )
        got.append(
            [
                (e["event"], e.get("label"), e.get("key"), e.get("value"), e["nesting"])
                for e in _events(trace)
                # (Git's total_bytes, the receiving meter's throughput, is not
                # written by gitodb)
                if e.get("category") == "progress" and e.get("key") != "total_bytes"
            ]
        )
    assert got[1] == got[0]
    assert got[0] and got[0][0][1] == "Receiving objects"
