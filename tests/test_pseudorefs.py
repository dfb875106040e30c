"""FETCH_HEAD and MERGE_HEAD: files in the git directory on both backends, read as
Git reads them and never written through a ref store (Git 2.55's ``is_pseudo_ref``).

Messages are Git 2.55's, recorded here (2.39 still writes them); reftable
repositories come from ``gitodb refs migrate``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git, run_cli


@pytest.fixture(autouse=True)
def _identity(git_identity: None) -> None:
    """Every test runs with the test identity alone (``conftest.git_identity``)."""


def _run(
    capfd: pytest.CaptureFixture[str], repo: Path, *args: str, stdin: bytes | None = None
) -> tuple[int, str, str]:
    capfd.readouterr()
    status = run_cli(repo, *args, stdin=stdin)
    out, err = capfd.readouterr()
    return status, out, err


@pytest.fixture(params=["files", "reftable"])
def repo(request: pytest.FixtureRequest, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "repo"
    git("init", "-q", "-b", "main", path)
    git("-C", path, "commit", "-q", "--allow-empty", "-m", "one")
    if request.param == "reftable":
        assert _run(capfd, path, "refs", "migrate", "--ref-format=reftable")[0] == 0
    return path


def _store_state(repo: Path) -> list[str]:
    git_dir = repo / ".git"
    return sorted(
        str(p.relative_to(git_dir)) for p in git_dir.rglob("*") if "objects" not in p.parts
    )


@pytest.mark.parametrize("name", ["FETCH_HEAD", "MERGE_HEAD"])
def test_writes_are_refused(repo: Path, capfd: pytest.CaptureFixture[str], name: str) -> None:
    before = _store_state(repo)
    fatal = f"fatal: update_ref failed for ref '{name}': refusing to update pseudoref '{name}'\n"
    assert _run(capfd, repo, "update-ref", name, "HEAD") == (128, "", fatal)
    assert _run(capfd, repo, "update-ref", "--no-deref", name, "HEAD") == (128, "", fatal)
    error = f"error: refusing to update pseudoref '{name}'\n"
    assert _run(capfd, repo, "update-ref", "-d", name) == (1, "", error)
    assert _run(capfd, repo, "symbolic-ref", name, "refs/heads/main") == (1, "", error)
    for line in (f"update {name} HEAD", f"create {name} HEAD", f"delete {name}"):
        assert _run(capfd, repo, "update-ref", "--stdin", stdin=line.encode() + b"\n") == (
            128,
            "",
            f"fatal: refusing to update pseudoref '{name}'\n",
        ), line
    assert _store_state(repo) == before


def test_fetch_head_file_is_read(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    status, head, _ = _run(capfd, repo, "rev-list", "-1", "HEAD")
    head = head.strip()
    (repo / ".git" / "FETCH_HEAD").write_text(
        f"{head}\t\tbranch 'main' of ../sub\n{head}\tnot-for-merge\tbranch 'x' of ../sub\n"
    )
    assert _run(capfd, repo, "refs", "exists", "FETCH_HEAD") == (0, "", "")
    assert _run(capfd, repo, "show-ref", "--exists", "FETCH_HEAD") == (0, "", "")
    assert _run(capfd, repo, "rev-list", "-1", "FETCH_HEAD") == (0, head + "\n", "")
    assert _run(capfd, repo, "refs", "exists", "MERGE_HEAD") == (
        2,
        "",
        "error: reference does not exist\n",
    )
    # still not a ref of the store
    status, out, _ = _run(capfd, repo, "for-each-ref", "--include-root-refs")
    assert status == 0 and "FETCH_HEAD" not in out
