"""gitodb.dask on a real distributed.LocalCluster (two worker processes), against the
local engine row for row; a worker killed during a run."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import gitodb.dask as gdask  # noqa: E402
from bulk_repos import build_history, corrupt_copy  # noqa: E402
from gitodb import bulk  # noqa: E402
from gitodb.bulk.runner import run_local  # noqa: E402
from helpers import run_cli  # noqa: E402

# The workers import gitodb; this module's helpers travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dask-corpus")
    build_history(root / "a")
    build_history(root / "b", "sha256")
    build_history(root / "c")
    corrupt_copy(root / "a", root / "broken")
    return root


def _cluster() -> tuple[object, object]:
    cluster = gdask.local_cluster(2)
    return cluster, distributed.Client(cluster)


@pytest.fixture(scope="module")
def client() -> object:
    cluster, c = _cluster()
    yield c
    c.close()  # type: ignore[attr-defined]
    cluster.close()  # type: ignore[attr-defined]


def test_the_local_cluster_has_two_single_threaded_workers_without_profiler(
    client: object,
) -> None:
    """The workers gitodb starts do not sample their stacks every 10 ms (a task that
    holds the GIL loses ~10% to it)."""
    import dask

    info = client.scheduler_info()["workers"]  # type: ignore[attr-defined]
    assert len(info) == 2 and {w["nthreads"] for w in info.values()} == {1}
    got = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))  # type: ignore[attr-defined]
    assert set(got.values()) == {False}


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(repr(v) for v in r.values()) for r in table.to_pylist())


def _local(corpus: Path, table: str, out: Path, **options: object) -> pa.Table:
    run_local(
        bulk.discover([str(corpus)]), table, str(out), jobs=1, options=bulk.Options(**options)
    )  # type: ignore[arg-type]
    return pq.read_table(out / table, schema=bulk.schema(table))


@pytest.mark.parametrize("table", ["objects", "commits", "files"])
def test_read_table_matches_the_local_engine(
    corpus: Path, tmp_path: Path, client: object, table: str
) -> None:
    df = gdask.read_table([str(corpus)], table, errors="skip", split_bytes=1)
    assert list(df.columns) == bulk.schema(table).names
    tasks = bulk.plan(bulk.discover([str(corpus)]), table, bulk.Options(split_bytes=1))
    assert df.npartitions == len(tasks)
    if table == "commits":  # each repository's table in slices of its listing
        assert sum(t.part.startswith("rows-") for t in tasks) == 2 * 4
    got = pa.Table.from_pandas(df.compute(), schema=bulk.schema(table), preserve_index=False)
    want = _local(corpus, table, tmp_path / "local", split_bytes=1)
    assert got.num_rows == want.num_rows > 0
    assert _rows(got) == _rows(want)


def test_ranges_of_a_pack_are_partitions(corpus: Path, tmp_path: Path, client: object) -> None:
    """A pack cut into ranges of its entries is several partitions, built on the two
    workers, with the rows of the local engine."""
    options = {"split_bytes": 1, "range_bytes": 500}
    tasks = bulk.plan(bulk.discover([str(corpus / "a")]), "objects", bulk.Options(**options))
    assert sum("#" in t.part for t in tasks) >= 3
    df = gdask.read_table([str(corpus / "a")], "objects", **options)
    assert df.npartitions == len(tasks)
    got = pa.Table.from_pandas(df.compute(), schema=bulk.schema("objects"), preserve_index=False)
    want = pa.Table.from_batches(
        list(bulk.table_batches(corpus / "a", "objects")), bulk.schema("objects")
    )
    assert got.num_rows == want.num_rows
    assert _rows(got) == _rows(want)


def test_read_table_raises_on_an_unreadable_repository(corpus: Path, client: object) -> None:
    df = gdask.read_table([str(corpus / "broken")], "commits")
    with pytest.raises(RuntimeError, match="broken"):
        df.compute()


def test_cli_dask_engine_writes_the_same_tables(
    corpus: Path, tmp_path: Path, client: object, capsys: pytest.CaptureFixture[str]
) -> None:
    address = client.scheduler.address  # type: ignore[attr-defined]
    out = tmp_path / "dask-out"
    status = run_cli(
        tmp_path,
        "bulk",
        "changes",
        "--repos",
        str(corpus),
        "--out",
        str(out),
        "--engine",
        "dask",
        "--scheduler",
        address,
    )
    assert status == 1, capsys.readouterr().err
    got = pq.read_table(out / "changes", schema=bulk.schema("changes"))
    want = _local(corpus, "changes", tmp_path / "local")
    assert _rows(got) == _rows(want)
    errors = pq.read_table(out / "errors" / "changes").to_pylist()
    assert [e["repository"] for e in errors] == [str(corpus / "broken")]
    assert "1 repositories failed" in capsys.readouterr().err
    # The same layout as the local engine: the same files, the same manifest.
    for sub in ("changes", "errors/changes"):
        assert sorted(p.name for p in (out / sub).iterdir()) == sorted(
            p.name for p in (tmp_path / "local" / sub).iterdir()
        )
    assert json.loads((out / "changes" / "_manifest.json").read_text()) == json.loads(
        (tmp_path / "local" / "changes" / "_manifest.json").read_text()
    )


def test_dask_engine_to_a_url_resumes(
    corpus: Path, tmp_path: Path, client: object, capsys: pytest.CaptureFixture[str]
) -> None:
    address = client.scheduler.address  # type: ignore[attr-defined]
    url = (tmp_path / "o").as_uri()
    args = [
        "bulk",
        "refs",
        "--repos",
        str(corpus),
        "--out",
        url,
        "--engine",
        "dask",
        "--scheduler",
        address,
    ]
    assert run_cli(tmp_path, *args) == 0  # refs of the broken copy can be read
    first = sorted(p.name for p in (tmp_path / "o" / "refs").glob("*.parquet"))
    assert len(first) == 4
    capsys.readouterr()
    victim = tmp_path / "o" / "refs" / first[0]
    victim.unlink()
    assert run_cli(tmp_path, *args) == 0
    err = capsys.readouterr().err
    assert "4 tasks (3 already complete)" in err
    assert sorted(p.name for p in (tmp_path / "o" / "refs").glob("*.parquet")) == first
    want = pa.Table.from_batches(
        list(bulk.table_batches(corpus / "a", "refs")), schema=bulk.schema("refs")
    )
    got = pq.read_table(tmp_path / "o" / "refs", schema=bulk.schema("refs"))
    assert _rows(got.filter(pc.equal(got["repository"], str(corpus / "a")))) == _rows(want)


def _slow_task_table(*args: object, **kwargs: object) -> object:
    time.sleep(0.5)
    return _ORIGINAL(*args, **kwargs)  # type: ignore[name-defined]  # noqa: F821


def _slow_down() -> None:
    """Run on each worker: every task takes a while, so one can be caught running."""
    import gitodb.bulk.store as g

    globals()["_ORIGINAL"] = g.run_task_to_file
    g.run_task_to_file = _slow_task_table


def _restore() -> None:
    import gitodb.bulk.store as g

    if "_ORIGINAL" in globals():
        g.run_task_to_file = globals()["_ORIGINAL"]


def test_a_worker_killed_during_a_run(corpus: Path, tmp_path: Path, client: object) -> None:
    # The last test of the module: the cluster gets a restarted worker.
    c = client
    try:
        c.run(_slow_down)  # type: ignore[attr-defined]
        pids = c.run(os.getpid)  # type: ignore[attr-defined]
        killed: list[int] = []

        def killer() -> None:
            while not killed:
                for worker, keys in c.processing().items():  # type: ignore[attr-defined]
                    if any("run_task_to_store" in str(k) for k in keys):
                        os.kill(pids[worker], signal.SIGKILL)
                        killed.append(pids[worker])
                        return
                time.sleep(0.02)

        t = threading.Thread(target=killer, daemon=True)
        t.start()
        out = tmp_path / "out"
        repos = [str(corpus / n) for n in ("a", "b", "c")]
        result = gdask.write_table(repos, "objects", str(out), client=c, split_bytes=1)
        t.join(timeout=0)
        assert killed, "no task was seen running"
    finally:
        c.run(_restore)  # type: ignore[attr-defined]
    got = pq.read_table(out / "objects", schema=bulk.schema("objects"))
    want = pa.concat_tables(
        pa.Table.from_batches(list(bulk.table_batches(r, "objects")), bulk.schema("objects"))
        for r in repos
    )
    assert result["rows"] == got.num_rows == want.num_rows
    assert _rows(got) == _rows(want)  # complete, nothing twice
    manifest = json.loads((out / "objects" / "_manifest.json").read_text())
    assert {t["status"] for t in manifest["tasks"]} == {"complete"}


def test_a_worker_task_does_not_load_dask_dataframe(corpus: Path, tmp_path: Path) -> None:
    """What a worker unpickles and runs (``write_table``'s task) lives outside
    ``gitodb.dask``: a worker process loads the tables and fsspec, not
    ``dask.dataframe`` (seconds of start-up and ~100 MB per worker)."""
    import pickle
    import subprocess
    import sys

    from gitodb.bulk.store import FsspecStore, run_task_to_store

    out = (tmp_path / "o").as_uri()
    task = bulk.plan([str(corpus / "a")], "refs")[0]
    job = pickle.dumps((run_task_to_store, task, bulk.Options(), out, FsspecStore(out)))
    code = (
        "import pickle, sys; f, *a = pickle.loads(sys.stdin.buffer.read()); r = f(*a); "
        "print(r.rows, 'dask.dataframe' in sys.modules, 'pandas.core.frame' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=job, capture_output=True, check=True)
    rows, has_dd, _pandas = proc.stdout.decode().split()
    assert has_dd == "False"
    want = len(list(bulk.table_batches(corpus / "a", "refs"))[0])
    assert int(rows) == want
    assert pq.read_table(tmp_path / "o" / "refs").num_rows == want


def test_dask_starts_the_largest_repositories_first(tmp_path: Path) -> None:
    """As the local engine: the tasks start in decreasing pack size (a large one started
    last would leave the other workers idle); one single-threaded worker writes the
    files in the order it runs the tasks."""
    import subprocess

    sizes = [20_000, 300_000, 1_000, 120_000, 60_000, 200_000]
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    repos = []
    for i, size in enumerate(sizes):
        repo = tmp_path / f"r{i}"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        (repo / "data").write_bytes(os.urandom(size))  # incompressible: pack ~ size
        for args in (
            ["add", "data"],
            ["-c", "user.name=A", "-c", "user.email=a@x", "commit", "-qm", "data"],
            ["repack", "-adq"],
        ):
            subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
        repos.append(str(repo))
    cluster = gdask.local_cluster(1)
    c = distributed.Client(cluster)
    try:
        out = tmp_path / "out"
        result = gdask.write_table(repos, "refs", str(out), client=c)
    finally:
        c.close()
        cluster.close()
    assert result["failed"] == 0
    ran = sorted(
        (r.task for r in result["results"]),
        key=lambda t: os.stat(bulk.tasks.data_path(str(out), t)).st_mtime_ns,
    )
    want = [repos[i] for i in sorted(range(len(sizes)), key=lambda i: -sizes[i])]
    assert [t.repository for t in ran] == want
