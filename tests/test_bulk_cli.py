"""``gitodb bulk`` and the local runner: discovery, output layout, errors, resume."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from bulk_repos import build_history, corrupt_copy, gitc  # noqa: E402
from gitodb import bulk  # noqa: E402
from gitodb.bulk.runner import progress_printer, run_local  # noqa: E402
from gitodb.bulk.tasks import TMP_MARK, Task, data_path, temp_path  # noqa: E402
from helpers import git, run_cli  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two work trees (one SHA-256), a bare clone, a corrupt copy, a nested repository
    inside a work tree (not to be listed) and plain directories."""
    root = tmp_path_factory.mktemp("corpus")
    a = build_history(root / "group" / "a")
    build_history(root / "group" / "deeper" / "b", "sha256")
    git("clone", "-q", "--bare", a, root / "bare.git")
    corrupt_copy(a, root / "broken")
    git("init", "-q", a / "nested")  # inside a's work tree: a's own files
    (root / "plain" / "dir").mkdir(parents=True)
    return root


def test_discovery_finds_bare_and_work_trees_without_entering_them(
    corpus: Path, tmp_path: Path
) -> None:
    found = bulk.discover([str(corpus)])
    assert found == [
        str(corpus / "bare.git"),
        str(corpus / "broken"),
        str(corpus / "group" / "a"),
        str(corpus / "group" / "deeper" / "b"),
    ]
    listing = tmp_path / "list.txt"
    listing.write_text(
        f"# repositories\n{corpus / 'bare.git'}\n\n{corpus / 'missing'}\n{corpus / 'bare.git'}\n"
    )
    assert bulk.discover([str(listing), str(corpus / "group" / "a")]) == [
        str(corpus / "bare.git"),
        str(corpus / "missing"),
        str(corpus / "group" / "a"),
    ]


def _read_dir(path: Path) -> list[dict[str, object]]:
    files = sorted(p for p in path.glob("*.parquet"))
    rows: list[dict[str, object]] = []
    for f in files:
        rows += pq.read_table(f).to_pylist()
    return rows


def test_cli_run_writes_a_file_per_repository_errors_and_a_manifest(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status = run_cli(
        tmp_path,
        "bulk",
        "commits",
        "--repos",
        str(corpus),
        str(corpus / "missing"),
        "--out",
        str(out),
        "-j",
        "2",
    )
    err = capsys.readouterr().err
    assert status == 2, err  # the corrupt copy and the missing path
    repos = bulk.discover([str(corpus)]) + [str(corpus / "missing")]
    files = sorted(p.name for p in (out / "commits").glob("*.parquet"))
    assert len(files) == 3
    rows = _read_dir(out / "commits")
    for r in repos[:1] + repos[2:4]:
        mine = [x["id"] for x in rows if x["repository"] == r]
        assert sorted(mine) == sorted(gitc(Path(r), "rev-list", "--all").split())
    errors = _read_dir(out / "errors" / "commits")
    assert sorted(e["repository"] for e in errors) == sorted(
        [str(corpus / "broken"), str(corpus / "missing")]
    )
    manifest = json.loads((out / "commits" / "_manifest.json").read_text())
    status_of = {t["repository"]: t["status"] for t in manifest["tasks"]}
    assert status_of[str(corpus / "missing")] == "failed"
    assert status_of[str(corpus / "group" / "a")] == "complete"
    assert sum(t.get("rows", 0) for t in manifest["tasks"]) == len(rows)
    assert "2 repositories failed" in err and f"{len(rows)} rows" in err
    assert "error: " + str(corpus / "missing") in err


def test_every_table_runs_through_the_cli(corpus: Path, tmp_path: Path) -> None:
    repo = corpus / "group" / "a"
    for table in bulk.TABLE_NAMES:
        out = tmp_path / table
        assert (
            run_cli(tmp_path, "bulk", table, "--repos", str(repo), "--out", str(out), "-j", "1")
            == 0
        )
        got = _read_dir(out / table)
        want = pa.Table.from_batches(
            list(bulk.table_batches(repo, table)), schema=bulk.schema(table)
        ).to_pylist()
        assert got == want and got
    out = tmp_path / "files-content"
    assert (
        run_cli(
            tmp_path,
            "bulk",
            "files",
            "--repos",
            str(repo),
            "--out",
            str(out),
            "--rev",
            "v1",
            "--content-limit",
            "3",
        )
        == 0
    )
    got = _read_dir(out / "files")
    assert {r["revision"] for r in got} == {"v1"}
    assert all(len(r["content"]) <= 3 for r in got if r["type"] == "blob")  # type: ignore


@pytest.mark.parametrize(
    "args,message",
    [
        (["blobs", "--repos", ".", "--out", "o"], "unknown table 'blobs'"),
        (["objects", "--repos", ".", "--out", "o", "--rev", "HEAD"], "--rev does not apply"),
        (
            ["commits", "--repos", ".", "--out", "o", "--content-limit", "5"],
            "--content-limit does not apply",
        ),
        (["objects", "--repos", "."], "--out is required"),
        (["objects", "--out", "o"], "--repos is required"),
        (
            ["objects", "--repos", ".", "--out", "o", "--scheduler", "tcp://x:1"],
            "--scheduler needs --engine dask",
        ),
        (["objects", "--repos", ".", "--out", "s3://b/o"], "use --engine dask for a URL"),
        (["objects", "--repos", ".", "--out", "o", "--engine", "spark"], "invalid engine 'spark'"),
        (["objects", "--repos", ".", "--out", "o", "--bogus"], "unknown option `bogus'"),
        (["files", "--repos", ".", "--out", "o", "--content-limit", "-1"], "negative"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as e:
        raise SystemExit(run_cli(tmp_path, "bulk", *args))
    assert e.value.code == 129
    err = capsys.readouterr().err
    assert message in err and "usage: gitodb bulk" in err
    assert not (tmp_path / "o").exists()


def test_rerun_with_other_options_is_refused(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = str(corpus / "group" / "a")
    out = str(tmp_path / "o")
    assert run_cli(tmp_path, "bulk", "files", "--repos", repo, "--out", out) == 0
    assert run_cli(tmp_path, "bulk", "files", "--repos", repo, "--out", out, "--rev", "v1") == 128
    assert "was made with other options" in capsys.readouterr().err


def test_resume_after_an_interrupted_run(corpus: Path, tmp_path: Path) -> None:
    repos = bulk.discover([str(corpus)])
    clean = tmp_path / "clean"
    calls: list[tuple[str, int, int, bool]] = []
    run_local(
        repos,
        "objects",
        str(clean),
        jobs=1,
        progress=lambda title, done, total, finished: calls.append((title, done, total, finished)),
    )
    n = len(repos)  # the progress protocol of every long call (gitodb.types.Progress)
    assert calls == [("Running tasks", i, n, i == n) for i in range(1, n + 1)]
    out = tmp_path / "out"
    seen: list[Task] = []

    def interrupt(result: object) -> None:
        seen.append(result.task)  # type: ignore[attr-defined]
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_local(repos, "objects", str(out), jobs=1, on_result=interrupt)
    done = sorted(p.name for p in (out / "objects").glob("*.parquet"))
    assert len(done) + len(list((out / "errors" / "objects").glob("*.parquet"))) == 2
    manifest = json.loads((out / "objects" / "_manifest.json").read_text())
    assert sum(t["status"] == "missing" for t in manifest["tasks"]) == len(repos) - 2
    # A run killed while writing leaves a temporary file: never taken as complete.
    victim = Task(repos[-1], "objects")
    stale = Path(temp_path(data_path(str(out), victim)).replace(str(os.getpid()), "99999"))
    assert stale.name.startswith(".")
    stale.write_bytes(b"half a parquet file")
    summary = run_local(repos, "objects", str(out), jobs=2)
    assert summary.skipped == 1 and summary.done == len(repos) - 1  # the failed one again
    assert not stale.exists()
    assert not [p for p in (out / "objects").iterdir() if TMP_MARK in p.name]
    assert _read_dir(out / "objects") == _read_dir(clean / "objects")
    # A partial file is hidden from readers of the directory even before a rerun.
    stale.write_bytes(b"half a parquet file")
    assert pq.read_table(out / "objects").num_rows == len(_read_dir(clean / "objects"))
    assert _read_dir(out / "errors" / "objects") == _read_dir(clean / "errors" / "objects")


def test_a_repository_repaired_since_loses_its_errors_file(corpus: Path, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    corrupt_copy(corpus / "group" / "a", repo)
    out = str(tmp_path / "o")
    assert run_local([str(repo)], "commits", out).failed == 1
    shutil.rmtree(repo)
    shutil.copytree(corpus / "group" / "a", repo, symlinks=True)
    summary = run_local([str(repo)], "commits", out)
    assert summary.failed == 0 and summary.rows > 0
    assert not list((tmp_path / "o" / "errors" / "commits").glob("*.parquet"))


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_only(corpus: Path, tmp_path: Path) -> None:
    from gitodb.bulk.tasks import TaskResult

    quiet = io.StringIO()
    update, close = progress_printer(3, quiet)
    update(TaskResult(Task("x", "refs"), rows=5))
    close()
    assert quiet.getvalue() == ""
    tty = _Tty()
    update, close = progress_printer(2, tty)
    update(TaskResult(Task("x", "refs"), rows=5, bytes_written=1000))
    update(TaskResult(Task("y", "refs"), rows=7))
    close()
    assert "2/2" in tty.getvalue() and "12 rows" in tty.getvalue()


def test_output_names_are_stable_and_distinct(tmp_path: Path) -> None:
    a, b = Task("/x/one/repo.git", "objects"), Task("/y/one/repo.git", "objects")
    assert a.key != b.key and a.key.startswith("repo-")
    assert Task("/x/one/repo.git", "objects").key == a.key
    assert Task("/x/r", "objects", "pack-abc.pack").key.endswith(".pack-abc")
    assert Task("/x/r/.git", "objects").key.startswith("r-")
    assert os.path.basename(data_path("/o", a)) == a.key + ".parquet"


def test_damage_is_reported_once_as_an_error_line(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run_cli(
        tmp_path,
        "bulk",
        "commits",
        "--repos",
        str(corpus / "broken"),
        "--out",
        str(tmp_path / "o"),
        "-j",
        "1",
    )
    err = capsys.readouterr().err
    assert status == 1
    lines = err.splitlines()
    assert len(lines) == 2, err  # no warnings from inside the task
    assert lines[0].startswith(f"error: {corpus / 'broken'}: ")
    assert lines[1].startswith("bulk commits: 1 repositories")


def test_workers_are_forked_from_the_driver(corpus: Path, tmp_path: Path) -> None:
    """Two workers come from this process (fork, after the warm-up), so they pay no
    imports; the tables they write are those of an in-process run."""
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    repos = bulk.discover([str(corpus)])
    one = run_local(repos, "files", str(tmp_path / "one"), jobs=1)
    two = run_local(repos, "files", str(tmp_path / "two"), jobs=2)
    assert {r.parent_pid for r in two.results} == {os.getpid()}
    assert len({r.pid for r in two.results}) == 2
    assert {r.pid for r in one.results} == {os.getpid()}
    assert _read_dir(tmp_path / "two" / "files") == _read_dir(tmp_path / "one" / "files")


def test_with_other_threads_running_workers_come_from_a_fork_server(
    corpus: Path, tmp_path: Path
) -> None:
    """Forking a process with threads can copy a lock some thread holds: then the
    workers come from the fork server, and the result is the same."""
    import threading

    repos = bulk.discover([str(corpus)])
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        two = run_local(repos, "refs", str(tmp_path / "two"), jobs=2)
    finally:
        stop.set()
        t.join()
    assert os.getpid() not in {r.parent_pid for r in two.results}
    run_local(repos, "refs", str(tmp_path / "one"), jobs=1)
    assert _read_dir(tmp_path / "two" / "refs") == _read_dir(tmp_path / "one" / "refs")


def test_parquet_dictionaries_and_statistics_only_where_they_pay(
    corpus: Path, tmp_path: Path
) -> None:
    """Columns that repeat (repository, type) are dictionary-encoded and have min/max
    statistics; ids are stored plain, without statistics (all distinct: a dictionary
    and min/max of random hex cost CPU and help no reader); integers are
    DELTA_BINARY_PACKED."""
    repos = bulk.discover([str(corpus / "group")])
    run_local(repos, "objects", str(tmp_path), jobs=1)
    (f, *_rest) = sorted((tmp_path / "objects").glob("*.parquet"))
    meta = pq.ParquetFile(f).metadata
    cols = {
        meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
        for i in range(meta.num_columns)
    }
    assert "RLE_DICTIONARY" in cols["repository"].encodings
    assert cols["type"].statistics is not None and cols["type"].statistics.has_min_max
    assert cols["size"].statistics is not None and cols["size"].statistics.has_min_max
    assert "RLE_DICTIONARY" not in cols["id"].encodings
    assert cols["id"].statistics is None or not cols["id"].statistics.has_min_max
    assert cols["id"].compression == "ZSTD"
    # integers delta-encoded (less for zstd to do), read back as they were written
    assert "DELTA_BINARY_PACKED" in cols["offset"].encodings
    assert "DELTA_BINARY_PACKED" in cols["size"].encodings
    assert pq.read_table(f).schema == bulk.schema("objects")
