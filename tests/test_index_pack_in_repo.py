"""index-pack inside a repository (the ``fetch`` case) on the native path, against git.

Inside a repository Git compares every received object the repository already has
with the stored one (``SHA1 COLLISION FOUND WITH <id> !`` when they differ).  gitodb
indexes the pack with the native core and then asks the repository in bulk which
ids it has (``ObjectDatabase.mark_present``), reading and comparing only those.
The trace2 data event ``index-pack/resolve`` says which path indexed the pack;
``index-pack/collision-candidates`` how many objects were compared.  Every test
runs under each installed zlib backend (the reading path is the backend's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.objects import SHA1
from gitodb.pack import index_native
from gitodb.pack.index_write import IndexPackOptions, index_pack_file
from gitodb.repo.odb import ObjectDatabase
from helpers import git, git_env, snapshot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not index_native.native_available(), reason="the native core is not built"),
]

BACKENDS = [
    b for b in ("zlib", "zlib-ng", "isal", "libdeflate") if b in compress.available_backends()
]


def _run(
    args: list[str], cwd: Path, backend: str, stdin: bytes | None = None, trace: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = {**git_env(), "GITODB_ZLIB_BACKEND": backend}
    if trace is not None:
        env["GIT_TRACE2_EVENT"] = str(trace)
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )


def _data(trace: Path) -> dict[str, object]:
    """``key -> value`` of the trace2 data events of category index-pack."""
    out: dict[str, object] = {}
    for line in trace.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("event") == "data" and ev.get("category") == "index-pack":
            out[ev["key"]] = ev["value"]
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """A repository with delta chains, its one pack copied out, and the object count."""
    root = tmp_path_factory.mktemp("src")
    work = root / "work"
    git("init", "-q", work)
    for i in range(40):
        for k in range(4):
            (work / f"f{k}").write_text("".join(f"line {j} {k}\n" for j in range(i * 20 + k)))
        (work / f"g{i}").write_text(f"{i}\n")
        git("add", "-A", cwd=work)
        git("commit", "-qm", f"c{i}", cwd=work)
    git("repack", "-adq", cwd=work)
    (pack,) = (work / ".git/objects/pack").glob("*.pack")
    copy = root / "in.pack"
    copy.write_bytes(pack.read_bytes())
    count = int.from_bytes(copy.read_bytes()[8:12], "big")
    return work, copy, count


def _bare(path: Path, holding: Path | None) -> Path:
    """A bare repository, holding ``holding``'s pack (the same files) if given."""
    git("init", "-q", "--bare", path)
    if holding is not None:
        for p in (holding / ".git/objects/pack").iterdir():
            (path / "objects/pack" / p.name).write_bytes(p.read_bytes())
    return path


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("holding", [True, False], ids=["holding", "empty"])
@pytest.mark.parametrize("mode", ["stdin", "stdin-threads", "file"])
def test_in_repository_takes_the_native_path_and_matches_git(
    tmp_path: Path, source: tuple[Path, Path, int], backend: str, holding: bool, mode: str
) -> None:
    work, pack, count = source
    outputs = []
    for who in ("git", "gitodb"):
        repo = _bare(tmp_path / who, work if holding else None)
        if mode == "file":
            dest = tmp_path / f"{who}.pack"
            dest.write_bytes(pack.read_bytes())
            args = ["index-pack", "--rev-index", str(dest)]
            stdin = None
        else:
            args = ["index-pack", "--stdin", "--rev-index"]
            args += ["--threads=2"] if mode == "stdin-threads" else ["--threads=1"]
            stdin = pack.read_bytes()
        if who == "git":
            proc = subprocess.run(
                ["git", *args], cwd=repo, input=stdin, capture_output=True, env=git_env()
            )
        else:
            trace = tmp_path / "trace.json"
            proc = _run(args, repo, backend, stdin, trace)
        assert proc.returncode == 0, proc.stderr
        files = {}
        if mode == "file":
            for ext in ("pack", "idx", "rev"):
                files[ext] = (tmp_path / f"{who}.{ext}").read_bytes()
        else:
            for p in sorted((repo / "objects/pack").iterdir()):
                files[p.name] = p.read_bytes()
        outputs.append((proc.stdout, proc.stderr, files))
    assert outputs[1] == outputs[0]
    events = _data(tmp_path / "trace.json")
    assert events["resolve"] == "native"
    assert events["collision-candidates"] == (count if holding else 0)
    if holding:  # the same pack: every object is proven the same by its stored bytes
        assert events["collision-reads"] == 0


def _faked_collision(tmp_path: Path, extra: int, packed: bool) -> tuple[Path, Path, str]:
    """t5300's fake collision: a repository whose object b holds a's content (loose, or
    in a pack whose index names a's entry b), and a pack (made elsewhere) with the
    real b and ``extra`` more blobs the repository does not have."""
    (tmp_path / "a").write_bytes(b"aaa\n")
    (tmp_path / "b").write_bytes(b"bbbb\n")
    names = ["../a", "../b"]
    for i in range(extra):
        (tmp_path / f"x{i}").write_bytes(f"extra {i}\n".encode())
        names.append(f"../x{i}")
    clean = tmp_path / "clean"
    git("init", "-q", clean)
    ids = git("hash-object", "-w", *names, cwd=clean).decode().split()
    prefix = tmp_path / "pk"
    name = git("pack-objects", str(prefix), cwd=clean, input="\n".join(ids).encode() + b"\n")
    pack = Path(f"{prefix}-{name.decode().strip()}.pack")
    corrupt = tmp_path / "corrupt"
    git("init", "-q", corrupt)
    if packed:
        # A one-object pack holding a's content, with an index that calls it b.
        from gitodb.pack.idx import write_index_v2

        one = tmp_path / "one"
        got = git("pack-objects", str(one), cwd=clean, input=f"{ids[0]}\n".encode())
        one_pack = Path(f"{one}-{got.decode().strip()}.pack")
        raw = one_pack.read_bytes()
        idx = one_pack.with_suffix(".idx").read_bytes()
        crc = int.from_bytes(idx[8 + 1024 + 20 : 8 + 1024 + 24], "big")
        fake = write_index_v2([(bytes.fromhex(ids[1]), crc, 12)], raw[-20:], SHA1)
        dest = corrupt / ".git/objects/pack" / one_pack.name
        dest.write_bytes(raw)
        dest.with_suffix(".idx").write_bytes(fake)
        git("hash-object", "-w", "../a", cwd=corrupt)
    else:
        git("hash-object", "-w", "../a", "../b", cwd=corrupt)
        loose = corrupt / ".git/objects"
        (loose / ids[1][:2] / ids[1][2:]).chmod(0o644)
        (loose / ids[1][:2] / ids[1][2:]).write_bytes(
            (loose / ids[0][:2] / ids[0][2:]).read_bytes()
        )
    return corrupt, pack, ids[1]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("extra", [0, 40], ids=["walked", "looked-up"])
@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
@pytest.mark.parametrize("args", [["--stdin"], ["--stdin", "--threads=2"], ["-o", "../bad.idx"]])
def test_collision_found_on_the_native_path_like_git(
    tmp_path: Path, backend: str, extra: int, packed: bool, args: list[str]
) -> None:
    corrupt, pack, b_id = _faked_collision(tmp_path, extra, packed)
    cmd = ["index-pack", *args] + ([] if "--stdin" in args else [str(pack)])
    stdin = pack.read_bytes() if "--stdin" in args else None
    expected = subprocess.run(
        ["git", *cmd], cwd=corrupt, input=stdin, capture_output=True, env=git_env()
    )
    assert (expected.returncode, expected.stderr) == (
        128,
        f"fatal: SHA1 COLLISION FOUND WITH {b_id} !\n".encode(),
    )
    # (Git leaves its tmp_pack_* behind on this error; gitodb must add nothing.)
    before = snapshot(corrupt / ".git")
    trace = tmp_path / "trace.json"
    got = _run(cmd, corrupt, backend, stdin, trace)
    assert (got.returncode, got.stdout, got.stderr) == (128, b"", expected.stderr)
    assert snapshot(corrupt / ".git") == before
    assert not (tmp_path / "bad.idx").exists()
    events = _data(trace)
    assert events["resolve"] == "native"
    assert events["collision-candidates"] == 2


def test_mark_present_agrees_with_contains(tmp_path: Path, source: tuple[Path, Path, int]) -> None:
    work, _pack, _count = source
    (work / "loose.txt").write_text("only loose\n")
    loose_id = bytes.fromhex(git("hash-object", "-w", "loose.txt", cwd=work).decode().strip())
    odb = ObjectDatabase(work / ".git/objects", SHA1)
    listed = [
        bytes.fromhex(x)
        for x in git("rev-list", "--all", "--objects", cwd=work).decode().split()
        if len(x) == 40
    ]
    wanted = listed[::3] + [loose_id, SHA1.empty_tree, b"\x01" * 20, b"\xfe" * 20]
    marks = bytearray(len(wanted))
    n = odb.mark_present(b"".join(wanted), marks)
    assert [bool(m) for m in marks] == [odb.contains(o) for o in wanted]
    assert n == len(wanted) - 2
    # With where to say it: the number of the pack holding each packed id, and its
    # position in that pack's index; 255 for the loose one and the empty tree.
    marks = bytearray(len(wanted))
    positions = array("q", bytes(8 * len(wanted)))
    packs: list = []
    assert odb.mark_present(b"".join(wanted), marks, positions, packs) == n
    (only,) = packs
    for i, oid in enumerate(wanted[:-4]):
        assert marks[i] == 1 and only.idx.oid_at(positions[i]) == oid
    assert list(marks[-4:]) == [255, 255, 0, 0]
    assert odb.mark_present(b"".join(wanted), marks) == 0  # marked ones are skipped


def test_library_result_says_native_and_the_check_ran(
    tmp_path: Path, source: tuple[Path, Path, int]
) -> None:
    work, pack, count = source
    odb = ObjectDatabase(work / ".git/objects", SHA1)
    dest = tmp_path / "p.pack"
    dest.write_bytes(pack.read_bytes())
    outcome = index_pack_file(str(dest), SHA1, IndexPackOptions(threads=1), existing=odb)
    assert outcome.result.native
    assert outcome.index_path == str(tmp_path / "p.idx")
    assert sorted(os.listdir(tmp_path)) == ["p.idx", "p.pack"]


def test_thin_pack_in_repository_stays_on_the_reference(
    tmp_path: Path, source: tuple[Path, Path, int]
) -> None:
    # --fix-thin: the native core leaves a thin pack to the reference (documented), which
    # completes it and runs the collision check per object; the result is Git's.
    work, _pack, _count = source
    base = git("rev-parse", "HEAD~10", cwd=work).strip().decode()
    thin = git(
        "pack-objects", "--thin", "--stdout", "--revs", cwd=work, input=f"HEAD\n^{base}\n".encode()
    )
    part = git("pack-objects", "--stdout", "--revs", cwd=work, input=f"{base}\n".encode())
    outs = []
    for who in ("git", "gitodb"):
        r = tmp_path / who
        git("init", "-q", "--bare", r)
        git("index-pack", "--stdin", cwd=r, input=part)
        if who == "git":
            proc = subprocess.run(
                ["git", "index-pack", "--stdin", "--fix-thin"],
                cwd=r,
                input=thin,
                capture_output=True,
                env=git_env(),
            )
        else:
            proc = _run(
                ["index-pack", "--stdin", "--fix-thin"], r, "zlib", thin, tmp_path / "trace.json"
            )
        assert proc.returncode == 0, proc.stderr
        outs.append((proc.stdout, {p.name: p.read_bytes() for p in (r / "objects/pack").iterdir()}))
    assert outs[1] == outs[0]
    assert _data(tmp_path / "trace.json")["resolve"] == "reference"


@pytest.mark.parametrize("backend", BACKENDS)
def test_objects_held_in_another_form_are_read_and_compared(
    tmp_path: Path, source: tuple[Path, Path, int], backend: str
) -> None:
    # The repository holds the same objects loose (another form than the pack's
    # entries): every one is read from both sides and compared, and all agree.
    work, pack, count = source
    repo = _bare(tmp_path / "loose", None)
    subprocess.run(
        ["git", "unpack-objects", "-q"],
        cwd=repo,
        input=pack.read_bytes(),
        env=git_env(),
        check=True,
    )
    proc = _run(["index-pack", "--stdin"], repo, backend, pack.read_bytes(), tmp_path / "t.json")
    assert proc.returncode == 0, proc.stderr
    events = _data(tmp_path / "t.json")
    assert (events["resolve"], events["collision-candidates"]) == ("native", count)
    assert events["collision-reads"] == count
