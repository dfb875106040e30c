"""``-O<orderfile>`` (and ``log``'s ``diff.orderFile``): a diff's files in the order
of a list of patterns, compared byte for byte with the ``git`` on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git
from oracle import assert_same

ORDERS = {
    "globs": "top*\n# a comment\n\nf\nd2/*\n",
    "spaces": "  top\nd2\n",  # kept as written: "  top" matches nothing
    "crlf": "*2\r\nd*\n",
    "empty": "",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("order") / "r"
    git("init", "-q", r)
    for name in ("d/a", "d/e/b", "f/c", "top", "gone"):
        (r / name).parent.mkdir(parents=True, exist_ok=True)
        (r / name).write_text("".join(f"{name} {i}\n" for i in range(30)))
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    (r / "d2").mkdir()
    (r / "d2/a").write_text((r / "d/a").read_text())
    (r / "f/c2").write_text("new\n")
    (r / "top").write_text("changed\n")
    (r / "top2").write_text("".join(f"top {i}\n" for i in range(30)))
    (r / "d/a").write_text("edited\n")
    git("rm", "-q", "gone", cwd=r)
    git("add", "-A", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    for name, text in ORDERS.items():
        (r.parent / name).write_bytes(text.encode())
    return r


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize(
    "args", [["-r"], ["-r", "-p"], ["-r", "--stat"], ["-r", "-C", "-C"], ["-r", "-M", "-R"], []]
)
def test_orderfile_as_git(repo: Path, order: str, args: list[str]) -> None:
    path = str(repo.parent / order)
    assert_same(repo, "diff-tree", *args, "-O" + path, "HEAD~", "HEAD")
    assert_same(repo, "diff-tree", *args, "-O", path, "HEAD~", "HEAD")


def test_orderfile_errors_as_git(repo: Path) -> None:
    assert_same(repo, "diff-tree", "-r", "-O" + str(repo.parent / "missing"), "HEAD~", "HEAD")


@pytest.mark.parametrize("order", ["globs", "crlf"])
def test_log_orderfile_config_as_git(repo: Path, order: str) -> None:
    path = str(repo.parent / order)
    assert_same(repo, "-c", f"diff.orderFile={path}", "log", "--name-status")
    assert_same(repo, "-c", f"diff.orderFile={path}", "log", "--stat", "-O/dev/null")
    assert_same(repo, "log", "-p", "-O", path)
