"""Ref commands against the outputs Git 2.55 recorded (compared as bytes)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gitodb.cli.main import main
from gitodb.reftable.reader import TableReader

DATA = Path(__file__).parent / "data"
FIXTURES = [
    "reftable-small",
    "reftable-stack",
    "reftable-sha256",
    "reftable-blocksize",
    "packs-mixed",
    "packs-sha256",
]
FER = "--format=%(refname) %(objecttype) %(objectname) %(*objectname) %(symref)"


def _out(capfdbinary: pytest.CaptureFixture[bytes], repo: Path, *args: str) -> tuple[int, bytes]:
    old = os.getcwd()
    os.chdir(repo)
    try:
        code = main(list(args))
    finally:
        os.chdir(old)
    return code, capfdbinary.readouterr().out


def _cases() -> list[tuple[str, str, tuple[str, ...]]]:
    cases = []
    for fx in FIXTURES:
        exp = DATA / fx / "expected"
        if not exp.is_dir():
            continue
        cases += [
            (fx, "for-each-ref.txt", ("for-each-ref", FER)),
            (fx, "show-ref.txt", ("show-ref", "--head", "-d")),
        ]
        if (exp / "for-each-ref-root.txt").exists():
            cases.append(
                (fx, "for-each-ref-root.txt", ("for-each-ref", "--include-root-refs", FER))
            )
        if (exp / "reflog-list.txt").exists():
            cases.append((fx, "reflog-list.txt", ("reflog", "list")))
            for ref in (exp / "reflog-list.txt").read_text().split():
                f = "reflog/" + ref.replace("/", "__") + ".txt"
                cases.append((fx, f, ("log", "-g", "--format=%H %gd %gn <%ge> %gs", ref)))
    return cases


@pytest.mark.e2e
@pytest.mark.parametrize(
    "fixture,expected,args", _cases(), ids=lambda v: v if isinstance(v, str) else None
)
def test_output_matches_git(
    fixture: str, expected: str, args: tuple[str, ...], capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out = _out(capfdbinary, DATA / fixture / "repo", *args)
    assert code == 0
    assert out == (DATA / fixture / "expected" / expected).read_bytes()


@pytest.mark.e2e
def test_reftable_write_commands(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_COMMITTER_NAME", "C O Mitter")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1800000000 +0000")
    repo = tmp_path / "r"
    shutil.copytree(DATA / "reftable-stack" / "repo", repo)
    _, main_hex = _out(capfdbinary, repo, "show-ref", "-s", "refs/heads/main")
    main_id = main_hex.decode().split()[0]
    assert (
        _out(capfdbinary, repo, "update-ref", "-m", "new branch", "refs/heads/nb", main_id)[0] == 0
    )
    assert _out(capfdbinary, repo, "symbolic-ref", "refs/heads/sym", "refs/heads/nb")[0] == 0
    assert _out(capfdbinary, repo, "symbolic-ref", "refs/heads/sym")[1] == b"refs/heads/nb\n"
    _, log = _out(capfdbinary, repo, "log", "-g", "--format=%H %gd %gs", "nb")
    assert log == f"{main_id} nb@{{0}} new branch\n".encode()
    # tags written through update-ref get their peeled value stored (value type 2)
    _, tag = _out(capfdbinary, repo, "show-ref", "-s", "refs/tags/v1.1-outer")
    assert _out(capfdbinary, repo, "update-ref", "refs/tags/copy", tag.decode().split()[0])[0] == 0
    _, fer_before = _out(capfdbinary, repo, "for-each-ref", FER)
    assert _out(capfdbinary, repo, "pack-refs", "--all")[0] == 0
    tables = (repo / "reftable" / "tables.list").read_text().split()
    assert len(tables) == 1
    recs = {r.name: r for r in TableReader(repo / "reftable" / tables[0]).iter_refs()}
    assert recs[b"refs/tags/copy"].value_type == 2
    assert b"refs/heads/doomed" not in recs  # tombstones gone after full compaction
    _, fer_after = _out(capfdbinary, repo, "for-each-ref", FER)
    assert fer_after == fer_before
    assert b"refs/tags/copy tag" in fer_after
    # Git 2.55: a null <old-oid> with -d means "don't care"
    assert _out(capfdbinary, repo, "update-ref", "-d", "refs/heads/nb", "0" * 40)[0] == 0
    assert _out(capfdbinary, repo, "update-ref", "-d", "refs/heads/sym")[0] == 0
    assert _out(capfdbinary, repo, "show-ref", "refs/heads/nb")[0] == 1


def test_bad_table_is_one_fatal_line(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    repo = tmp_path / "r"
    shutil.copytree(DATA / "reftable-small" / "repo", repo)
    table = next((repo / "reftable").glob("*.ref"))
    table.write_bytes(table.read_bytes()[:-20])
    old = os.getcwd()
    os.chdir(repo)
    try:
        code = main(["for-each-ref"])
    finally:
        os.chdir(old)
    err = capfdbinary.readouterr().err.decode()
    assert code == 128
    assert err.startswith("fatal: ") and err.count("\n") == 1 and table.name in err


def test_usage_errors_exit_129(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    repo = DATA / "reftable-small" / "repo"
    assert _out(capfdbinary, repo, "update-ref")[0] == 129
    assert _out(capfdbinary, repo, "show-ref", "--bogus")[0] == 129


@pytest.mark.e2e
def test_reftable_stdin_prepare_abort_commit(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    repo = tmp_path / "r"
    shutil.copytree(DATA / "reftable-sha256" / "repo", repo)
    main_id = _out(capfdbinary, repo, "show-ref", "-s", "refs/heads/main")[1].decode().strip()
    dev_id = _out(capfdbinary, repo, "show-ref", "-s", "refs/heads/dev")[1].decode().strip()
    before = (repo / "reftable" / "tables.list").read_bytes()

    def feed(text: str) -> tuple[int, bytes]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
        return _out(capfdbinary, repo, "update-ref", "--stdin")

    code, out = feed(f"start\nupdate refs/heads/main {dev_id} {main_id}\nprepare\nabort\n")
    assert code == 0 and out == b"start: ok\nprepare: ok\nabort: ok\n"
    assert (repo / "reftable" / "tables.list").read_bytes() == before
    code, out = feed(f"start\nupdate refs/heads/main {dev_id} {dev_id}\ncommit\n")
    assert code == 128 and (repo / "reftable" / "tables.list").read_bytes() == before
    assert not (repo / "reftable" / "tables.list.lock").exists()
    code, out = feed(
        f"start\nupdate refs/heads/main {dev_id} {main_id}\n"
        f"create refs/tags/new {main_id}\ncommit\n"
    )
    assert code == 0 and out == b"start: ok\ncommit: ok\n"
    _, out = _out(capfdbinary, repo, "show-ref", "-s", "refs/heads/main", "refs/tags/new")
    assert out.decode().split() == [dev_id, main_id]  # sorted: heads before tags
