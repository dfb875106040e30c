"""``<ref>@{<date>}`` in revisions (Git's ``read_ref_at`` by time): the value the ref
had at that date, and Git's warning when the date is before the reflog starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import git, git_env, run_cli

DATES = ("2005-05-26 23:30", "2005-05-26 23:41", "2005-05-26 23:45")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "r"
    git("init", "-q", str(r))
    for d in DATES:
        (r / "F").write_text(d + "\n")
        git("add", "F", cwd=r)
        env = git_env() | {"GIT_COMMITTER_DATE": f"{d} -0500", "GIT_AUTHOR_DATE": f"{d} -0500"}
        subprocess.run(["git", "commit", "-q", "-m", d], cwd=r, env=env, check=True)
    return r


@pytest.mark.parametrize(
    "rev",
    [
        "master@{2005-05-26 23:30}:F",
        "master@{2005-05-26 23:42}:F",
        "master@{2005-05-26 23:47 -0500}:F",
        "master@{May 25 2005}:F",
        "@{2005-05-26 23:50}:F",
        "master@{yesterday}:F",
        "master@{2005-05-27 04:42 UTC}:F",
    ],
)
def test_cat_file_at_date_matches_git(
    repo: Path, rev: str, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    want = subprocess.run(
        ["git", "cat-file", "blob", rev], cwd=repo, capture_output=True, env=git_env()
    )
    capfdbinary.readouterr()
    code = run_cli(repo, "cat-file", "blob", rev)
    out, err = capfdbinary.readouterr()
    assert (code, out, err) == (want.returncode, want.stdout, want.stderr)


def test_date_before_history_warns(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    capfdbinary.readouterr()
    assert run_cli(repo, "cat-file", "blob", "master@{May 25 2005}:F") == 0
    out, err = capfdbinary.readouterr()
    assert out == b"2005-05-26 23:30\n"
    assert err == (b"warning: log for 'master' only goes back to Thu, 26 May 2005 23:30:00 -0500\n")
