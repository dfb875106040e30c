"""gitodb.bulk tables, one repository at a time, checked against git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")

from bulk_repos import GIT_255, build_history, corrupt_copy, gitc  # noqa: E402
from gitodb import bulk  # noqa: E402
from gitodb.bulk.tasks import Task, task_table  # noqa: E402
from helpers import git  # noqa: E402

FORMATS = ["sha1", "sha256"]


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bulk")
    out = {f: build_history(root / f, f) for f in FORMATS}
    if GIT_255.exists():
        out["reftable"] = build_history(root / "reftable", "sha1", str(GIT_255), "reftable")
    out["corrupt"] = corrupt_copy(out["sha1"], root / "corrupt")
    return out


def rows(repo: Path, table: str, **options: object) -> list[dict[str, object]]:
    batches = list(bulk.table_batches(repo, table, options=bulk.Options(**options)))
    for b in batches:
        assert b.schema == bulk.schema(table)
    return pa.Table.from_batches(batches, schema=bulk.schema(table)).to_pylist()


@pytest.fixture(params=["sha1", "sha256", "reftable"])
def repo(request: pytest.FixtureRequest, repos: dict[str, Path]) -> Path:
    if request.param not in repos:
        pytest.skip("reftable repositories need git 2.55 (../shared)")
    return repos[request.param]


# -- objects ------------------------------------------------------------------------
def test_objects_match_cat_file_and_verify_pack(repo: Path) -> None:
    got = rows(repo, "objects")
    zero = "0" * len(got[0]["id"])  # type: ignore[arg-type]
    want = {}
    for line in gitc(
        repo,
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)",
    ).splitlines():
        oid, t, size, disk, base = line.split()
        want[oid] = (t, int(size), int(disk), None if base == zero else base)
    assert len(got) == len(want)
    assert {
        r["id"]: (r["type"], r["size"], r["size_on_disk"], r["delta_base"]) for r in got
    } == want
    assert all(r["repository"] == str(repo) for r in got)
    # Pack, offset and depth as verify-pack -v lists them; loose objects have none.
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    listed = {}
    for line in gitc(repo, "verify-pack", "-v", str(pack)).splitlines():
        f = line.split()
        if len(f) >= 5 and f[1] in ("commit", "tree", "blob", "tag"):
            listed[f[0]] = (int(f[4]), int(f[5]) if len(f) > 5 else 0)
    packed = [r for r in got if r["pack"] is not None]
    assert {r["id"]: (r["offset"], r["depth"]) for r in packed} == listed
    assert {r["pack"] for r in packed} == {pack.name}
    assert any(r["depth"] > 0 for r in packed)
    loose = [r for r in got if r["pack"] is None]
    assert loose and all(r["offset"] is None and r["depth"] == 0 for r in loose)


def test_objects_split_per_pack_gives_the_same_rows(tmp_path: Path, repos: dict[str, Path]) -> None:
    import shutil

    repo = tmp_path / "two-packs"
    shutil.copytree(repos["sha1"], repo, symlinks=True)
    gitc(repo, "repack", "-q")  # the loose objects into a second pack
    whole = rows(repo, "objects")
    parts = bulk.parts(str(repo), "objects", bulk.Options(split_bytes=1))
    assert len(parts) == 3 and parts[-1] == "loose"
    split = []
    for part in parts:
        data, errors = task_table(Task(str(repo), "objects", part), bulk.Options())
        assert errors.num_rows == 0
        split += data.to_pylist()
    key = lambda r: (r["id"], r["pack"] or "")  # noqa: E731
    assert sorted(split, key=key) == sorted(whole, key=key)
    assert bulk.parts(str(repo), "objects") == ["all"]  # small: one part
    assert bulk.parts(str(repo), "files", bulk.Options(split_bytes=1)) == ["all"]


def test_a_single_pack_splits_into_ranges_of_its_entries(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    """A single big pack is several parts (ranges of its entries in pack order), so
    workers share it; together they list every entry once, with the bases, offsets
    and depths verify-pack gives (delta chains crossing the range boundaries)."""
    import shutil

    repo = tmp_path / "one-pack"
    shutil.copytree(repos["sha1"], repo, symlinks=True)
    gitc(repo, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=50")
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    options = bulk.Options(split_bytes=1, range_bytes=max(1, pack.stat().st_size // 5))
    parts = bulk.parts(str(repo), "objects", options)
    ranges = [p for p in parts if "#" in p]
    assert len(ranges) >= 4 and parts[-1] == "loose"
    assert all(p.startswith(pack.name + "#") for p in ranges)
    tasks = bulk.plan([str(repo)], "objects", options)
    assert len({t.key for t in tasks}) == len(tasks)  # one file each
    split = []
    for part in parts:
        data, errors = task_table(Task(str(repo), "objects", part), options)
        assert errors.num_rows == 0
        split += data.to_pylist()
    sizes = dict(
        line.split()
        for line in gitc(
            repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize)"
        ).splitlines()
    )
    listed = {}
    for line in gitc(repo, "verify-pack", "-v", str(pack)).splitlines():
        f = line.split()
        if len(f) >= 5 and f[1] in ("commit", "tree", "blob", "tag"):
            base = f[6] if len(f) > 6 else None
            listed[f[0]] = (f[1], int(sizes[f[0]]), int(f[4]), int(f[5]) if base else 0, base)
    got = {r["id"]: (r["type"], r["size"], r["offset"], r["depth"], r["delta_base"]) for r in split}
    assert len(split) == len(got) == len(listed)
    assert got == listed
    assert max(r["depth"] for r in split) > 2
    assert split == rows(repo, "objects")  # the same rows, in the same order, as one part


def test_a_range_part_of_a_replaced_pack_is_an_error(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    data, errors = task_table(
        Task(str(repos["sha1"]), "objects", _only_pack(repos["sha1"]) + "#0-999999"), bulk.Options()
    )
    assert data.num_rows == 0
    (row,) = errors.to_pylist()
    assert row["error_class"] == "PackError" and "past the pack" in row["message"]


def _only_pack(repo: Path) -> str:
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    return pack.name


def test_batches_are_bounded(repos: dict[str, Path]) -> None:
    batches = list(bulk.table_batches(repos["sha1"], "objects", options=bulk.Options(batch_rows=4)))
    assert len(batches) > 3 and all(b.num_rows <= 4 for b in batches)
    by_bytes = list(
        bulk.table_batches(
            repos["sha1"], "files", options=bulk.Options(batch_bytes=300, content_limit=10000)
        )
    )
    assert len(by_bytes) > 1
    assert sum(b.num_rows for b in by_bytes) == len(rows(repos["sha1"], "files"))
    # commits are built column by column: the same bounds, the same rows
    whole = rows(repos["sha1"], "commits", message=True)
    for options in (
        bulk.Options(batch_rows=2, message=True),
        bulk.Options(batch_bytes=700, message=True),
    ):
        batches = list(bulk.table_batches(repos["sha1"], "commits", options=options))
        assert len(batches) > 2 and all(
            b.num_rows <= max(2, options.batch_bytes // 300) for b in batches
        )
        assert pa.Table.from_batches(batches).to_pylist() == whole


# -- refs -----------------------------------------------------------------------------
def test_refs_match_for_each_ref(repo: Path) -> None:
    got = rows(repo, "refs")
    backend = "reftable" if "reftable" in repo.name else "files"
    assert {r["backend"] for r in got} == {backend}
    want = {}
    for line in gitc(
        repo, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname) %(symref)"
    ).splitlines():
        name, oid, peeled, *symref = line.split(" ")
        want[name] = (oid, peeled or None, symref[0] or None if symref else None)
    under_refs = {
        r["name"]: (r["target"], r["peeled"], r["symref_target"])
        for r in got
        if r["name"].startswith("refs/")
    }  # type: ignore[union-attr]
    assert under_refs == want
    assert want["refs/tags/v1"][1] is not None  # an annotated tag is peeled
    assert want["refs/heads/alias"][2] == "refs/heads/side"
    head = next(r for r in got if r["name"] == "HEAD")
    assert head["symref_target"] == gitc(repo, "symbolic-ref", "HEAD").strip()
    assert head["target"] == gitc(repo, "rev-parse", "HEAD").strip()


# -- commits ----------------------------------------------------------------------------
def sliced_rows(repo: Path, table: str, **options: object) -> list[dict[str, object]]:
    """The rows of every part of ``table`` split as a large repository's is, in the
    order of the parts."""
    opts = bulk.Options(split_bytes=1, **options)  # type: ignore[arg-type]
    parts = bulk.parts(str(repo), table, opts)
    assert len(parts) > 1
    out = []
    for part in parts:
        data, errors = task_table(Task(str(repo), table, part), opts)
        assert errors.num_rows == 0
        out += data.to_pylist()
    return out


@pytest.mark.parametrize("split", [False, True], ids=["whole", "sliced"])
def test_commits_match_rev_list_and_log(repo: Path, split: bool) -> None:
    got = (
        sliced_rows(repo, "commits", message=True) if split else rows(repo, "commits", message=True)
    )
    if split:  # the slices one after the other are the unsplit table
        assert got == rows(repo, "commits", message=True)
    order = gitc(repo, "rev-list", "--all").split()
    assert sorted(r["id"] for r in got) == sorted(order)  # type: ignore[type-var]
    position = {r["id"]: i for i, r in enumerate(got)}
    for r in got:  # children first
        assert all(position[p] > position[r["id"]] for p in r["parents"])  # type: ignore
    fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%s"
    log = {}
    for line in gitc(repo, "log", "--all", "--date=raw", f"--format={fmt}").splitlines():
        h, t, p, an, ae, ad, cn, ce, cd, s = line.split("\0")
        at, atz = ad.split()
        ct, ctz = cd.split()
        log[h] = (t, p.split(), an, ae, int(at), atz, cn, ce, int(ct), ctz, s)
    assert {
        r["id"]: (
            r["tree"],
            r["parents"],
            r["author_name"],
            r["author_email"],
            r["author_time"],
            r["author_tz"],
            r["committer_name"],
            r["committer_email"],
            r["committer_time"],
            r["committer_tz"],
            r["subject"],
        )
        for r in got
    } == log
    for r in got:
        raw = gitc(repo, "cat-file", "commit", str(r["id"]))
        assert r["message"] == raw.split("\n\n", 1)[1]
    # reachable_from: exactly HEAD and the branches, tags and remote-tracking refs
    # whose history holds the commit (refs/pull/ is walked but not named).
    every = gitc(repo, "for-each-ref", "--format=%(refname)").split()
    assert "refs/pull/1/head" in every
    refs = ["HEAD", *(r for r in every if r.startswith(("refs/heads/", "refs/tags/")))]
    history = {ref: set(gitc(repo, "rev-list", ref).split()) for ref in refs}
    for r in got:
        assert sorted(r["reachable_from"]) == sorted(  # type: ignore[arg-type]
            ref for ref in refs if r["id"] in history[ref]
        )
    assert rows(repo, "commits")[0]["message"] is None  # only when asked for


def test_commits_of_one_revision(repos: dict[str, Path]) -> None:
    repo = repos["sha1"]
    got = rows(repo, "commits", rev="side")
    assert [r["id"] for r in got] == gitc(repo, "rev-list", "--topo-order", "side").split()
    assert all(r["reachable_from"] == ["side"] for r in got)


# -- files ---------------------------------------------------------------------------------
def _ls_tree(repo: Path, rev: str) -> list[tuple[str, str, str, int | None, str]]:
    out = []
    for line in gitc(repo, "ls-tree", "-r", "-l", "-z", rev).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, oid, size = meta.split()
        out.append((mode, kind, oid, None if size == "-" else int(size), path))
    return out


def test_files_match_ls_tree(repo: Path) -> None:
    got = rows(repo, "files")
    assert [(r["mode"], r["type"], r["id"], r["size"], r["path"]) for r in got] == _ls_tree(
        repo, "HEAD"
    )
    head = gitc(repo, "rev-parse", "HEAD").strip()
    assert {(r["revision"], r["commit"]) for r in got} == {("HEAD", head)}
    kinds = {r["path"]: (r["mode"], r["type"]) for r in got}
    assert kinds["sub"] == ("160000", "commit") and kinds["run.sh"][0] == "100755"
    assert all(r["content"] is None and r["content_cut"] is None for r in got)
    old = rows(repo, "files", rev="v1")
    assert [(r["mode"], r["path"]) for r in old] == [(m, p) for m, *_x, p in _ls_tree(repo, "v1")]
    assert ("120000", "link") in [(r["mode"], r["path"]) for r in old]


def test_files_content_is_cut_at_the_limit(repos: dict[str, Path]) -> None:
    repo = repos["sha1"]
    got = {r["path"]: r for r in rows(repo, "files", content_limit=100)}
    for path, r in got.items():
        if r["type"] != "blob":
            assert r["content"] is None
            continue
        blob = (
            (repo / path).read_bytes()
            if not os.path.islink(repo / path)
            else os.readlink(repo / path).encode()
        )
        assert r["content"] == blob[:100]
        assert r["content_cut"] is (len(blob) > 100)
    assert got["late.txt"]["content_cut"] is True and got["README"]["content_cut"] is False
    assert rows(repo, "files", content_limit=0)[0]["content"] == b""


# -- changes --------------------------------------------------------------------------------
def test_changes_match_diff_tree(repo: Path) -> None:
    got = rows(repo, "changes")
    zero_mode = "000000"
    for commit in gitc(repo, "rev-list", "--all").split():
        parents = gitc(repo, "rev-parse", f"{commit}^@").split()
        args = [parents[0], commit] if parents else ["--root", commit]
        want = []
        for line in gitc(repo, "diff-tree", "-r", "--no-renames", "-z", *args).split(":")[1:]:
            meta, path = line.rstrip("\0").split("\0")[:2]
            om, nm, oo, no, st = meta.split()
            zero = "0" * len(oo)
            want.append(
                (
                    st,
                    path,
                    None if om == zero_mode else om,
                    None if nm == zero_mode else nm,
                    None if oo == zero else oo,
                    None if no == zero else no,
                )
            )
        mine = [
            (r["status"], r["path"], r["old_mode"], r["new_mode"], r["old_id"], r["new_id"])
            for r in got
            if r["commit"] == commit
        ]
        assert mine == want, commit
        assert {r["parent"] for r in got if r["commit"] == commit} <= {
            parents[0] if parents else None
        }
    statuses = {r["status"] for r in got}
    assert statuses == {"A", "D", "M", "T"}


# -- verify ---------------------------------------------------------------------------------
def test_verify_sound_and_damaged(repos: dict[str, Path]) -> None:
    good = rows(repos["sha1"], "verify")
    assert [(r["kind"], r["ok"]) for r in good] == [("pack", True), ("loose", True)]
    assert good[0]["objects"] == sum(1 for r in rows(repos["sha1"], "objects") if r["pack"])
    assert good[1]["objects"] == sum(1 for r in rows(repos["sha1"], "objects") if r["pack"] is None)
    bad = rows(repos["corrupt"], "verify")
    assert bad[0]["kind"] == "pack" and bad[0]["ok"] is False and bad[0]["error_class"]
    assert bad[1]["ok"] is True


def test_verify_reports_a_damaged_loose_object(tmp_path: Path, repos: dict[str, Path]) -> None:
    import shutil

    repo = tmp_path / "r"
    shutil.copytree(repos["sha1"], repo, symlinks=True)
    loose = sorted(p for p in (repo / ".git/objects").glob("??/*"))
    target = loose[0]
    os.chmod(target, 0o644)
    target.write_bytes(target.read_bytes()[:-4] + b"\0\0\0\0")
    got = rows(repo, "verify")
    summary = next(
        r
        for r in got
        if r["kind"] == "loose" and r["objects"] != 1 or r["file"] == str(repo / ".git/objects")
    )
    assert summary["ok"] is False
    damaged = [r for r in got if r["file"] == str(target)]
    assert len(damaged) == 1 and damaged[0]["error_class"]


# -- unreadable repositories ------------------------------------------------------------------
@pytest.mark.parametrize("table", ["objects", "commits", "changes", "files"])
def test_corrupt_repository_is_an_errors_row(repos: dict[str, Path], table: str) -> None:
    data, errors = task_table(Task(str(repos["corrupt"]), table), bulk.Options())
    assert data.num_rows == 0 and data.schema == bulk.schema(table)
    (row,) = errors.to_pylist()
    assert row["repository"] == str(repos["corrupt"]) and row["table"] == table
    assert row["error_class"] in ("PackError", "ObjectNotFoundError", "DeltaError")
    assert errors.schema == bulk.ERRORS_SCHEMA


def test_missing_path_is_an_errors_row(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    _data, errors = task_table(Task(missing, "refs"), bulk.Options())
    (row,) = errors.to_pylist()
    assert row["error_class"] == "RepositoryError" and "not a git repository" in row["message"]


def test_options_that_do_not_apply_are_refused() -> None:
    with pytest.raises(bulk.BulkUsageError, match="--content-limit"):
        bulk.Options(content_limit=3).check("commits")
    with pytest.raises(bulk.BulkUsageError, match="--rev"):
        bulk.Options(rev="HEAD").check("objects")
    with pytest.raises(bulk.BulkUsageError, match="unknown table"):
        bulk.Options().check("blobs")


# -- Git's bytes, kept ----------------------------------------------------------------
@pytest.fixture(scope="module")
def latin1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose file name, author, message and branch name are Latin-1 bytes
    (not UTF-8), beside UTF-8 ones."""
    repo = tmp_path_factory.mktemp("latin1") / "repo"
    git("init", "-q", repo)
    (repo / "ok-é.txt").write_text("utf-8 name\n")
    os.makedirs(repo, exist_ok=True)
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.txt"), "wb") as f:
        f.write(b"latin-1 name\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    # git commit would re-encode Latin-1 to UTF-8: the commit is written as bytes.
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo).strip()
    parent = git("rev-parse", "HEAD", cwd=repo).strip()
    raw = (
        b"tree " + tree + b"\nparent " + parent + b"\n"
        b"author Ren\xe9 Latin <ren\xe9@example.com> 1700000000 +0100\n"
        b"committer Zo\xc3\xab UTF-8 <z@example.com> 1700000000 +0100\n"
        b"\ncaf\xe9 subject\n\nbody \xff\n"
    )
    oid = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=raw).strip()
    git("update-ref", "HEAD", oid.decode(), cwd=repo)
    git("update-ref", os.fsdecode(b"refs/heads/caf\xe9"), "HEAD", cwd=repo)
    (repo / "second").write_text("x\n")
    git("add", "second", cwd=repo)
    git("rm", "-q", os.fsdecode(b"caf\xe9.txt"), cwd=repo)
    git("commit", "-q", "-m", "second", cwd=repo)
    return repo


def _bytes_of(row: dict[str, object], column: str) -> bytes | None:
    raw = row[column + "_bytes"]
    if raw is not None:
        assert "\ufffd" in row[column]  # type: ignore[operator]
        return raw  # type: ignore[return-value]
    text = row[column]
    return text.encode() if text is not None else None  # type: ignore[attr-defined]


def test_non_utf8_paths_and_names_keep_gits_bytes(latin1: Path) -> None:
    # files: ls-tree -z names
    want = sorted(
        p for p in git("ls-tree", "-r", "-z", "--name-only", "HEAD~", cwd=latin1).split(b"\0") if p
    )
    got = rows(latin1, "files", rev="HEAD~")
    assert sorted(_bytes_of(r, "path") for r in got) == want
    assert b"caf\xe9.txt" in want
    utf8 = next(r for r in got if r["path"] == "ok-é.txt")
    assert utf8["path_bytes"] is None  # exact text: no copy
    # changes: diff-tree -z names of the second commit
    want = sorted(
        p
        for p in git("diff-tree", "-r", "-z", "--name-only", "HEAD", cwd=latin1).split(b"\0")[1:]
        if p
    )
    got = [r for r in rows(latin1, "changes") if r["parent"] is not None]
    assert sorted(_bytes_of(r, "path") for r in got) == want
    # commits: author, committer, subject and message bytes as git log prints them
    fmt = "%H%x00%an%x00%ae%x00%cn%x00%ce%x00%s%x00%B%x01"
    log = git("log", "--all", "--encoding=none", f"--format={fmt}", cwd=latin1)
    want_c = {}
    for rec in log.split(b"\x01")[:-1]:
        h, an, ae, cn, ce, s, body = rec.lstrip(b"\n").split(b"\0")
        want_c[h.decode()] = (an, ae, cn, ce, s, body)
    got_c = {
        r["id"]: tuple(
            _bytes_of(r, c)
            for c in (
                "author_name",
                "author_email",
                "committer_name",
                "committer_email",
                "subject",
                "message",
            )
        )
        for r in rows(latin1, "commits", message=True)
    }
    assert got_c == want_c
    assert b"Ren\xe9 Latin" in {v[0] for v in got_c.values()}
    # refs: for-each-ref names
    want = sorted(
        n for n in git("for-each-ref", "--format=%(refname)", cwd=latin1).split(b"\n") if n
    )
    got = [r for r in rows(latin1, "refs") if r["name"] != "HEAD"]
    assert sorted(_bytes_of(r, "name") for r in got) == want
    assert b"refs/heads/caf\xe9" in want


def test_a_range_part_reads_only_its_own_ids(
    tmp_path: Path, repos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker given a range of a pack does not copy the pack's whole id table."""
    import shutil

    from gitodb.pack.idx import PackIndex

    repo = tmp_path / "one-pack"
    shutil.copytree(repos["sha1"], repo, symlinks=True)
    gitc(repo, "repack", "-q", "-a", "-d")
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    options = bulk.Options(split_bytes=1, range_bytes=max(1, pack.stat().st_size // 3))
    ranges = [p for p in bulk.parts(str(repo), "objects", options) if "#" in p]
    assert len(ranges) >= 2
    want = rows(repo, "objects")

    def whole_table(self: PackIndex) -> list[bytes]:
        raise AssertionError("a range copied the whole id table")

    monkeypatch.setattr(PackIndex, "oid_list", whole_table)
    got = []
    for part in ranges:
        data, errors = task_table(Task(str(repo), "objects", part), options)
        assert errors.num_rows == 0
        got += data.to_pylist()
    assert got == [r for r in want if r["pack"] is not None]
