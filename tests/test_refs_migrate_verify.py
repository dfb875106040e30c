"""``refs migrate`` and ``refs verify`` (Git 2.55's ``git refs``).

Repositories are built with the git on PATH (files); what Git 2.55 prints for
``refs verify`` was recorded from it (2.39 has no ``git refs``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gitodb.repo import Repository
from helpers import git, run_cli

FER = "--format=%(refname) %(objectname) %(symref)"


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import GIT_ENV

    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


def _out(capfd: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str, str]:
    capfd.readouterr()
    status = run_cli(repo, *args)
    out, err = capfd.readouterr()
    return status, out, err


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "two")
    git("-C", repo, "tag", "-a", "-m", "tag", "v1")
    git("-C", repo, "branch", "side", "HEAD~1")
    git("-C", repo, "update-ref", "FOO_HEAD", "HEAD")
    git("-C", repo, "symbolic-ref", "refs/heads/sym", "refs/heads/main")
    git("-C", repo, "symbolic-ref", "BROKEN_HEAD", "refs/heads/nonexistent")
    git("-C", repo, "pack-refs", "--all")
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "three")
    (repo / ".git" / "MERGE_HEAD").write_text(git("-C", repo, "rev-parse", "HEAD").decode())
    return repo


def _state(capfd: pytest.CaptureFixture[str], repo: Path) -> tuple[str, dict[str, list[object]]]:
    status, refs, _ = _out(capfd, repo, "for-each-ref", "--include-root-refs", FER)
    assert status == 0
    r = Repository(repo)
    logs = {n: r.refs.reflog(n) for n in r.refs.reflog_names()}
    r.close()
    return refs, logs  # type: ignore[return-value]


def test_migrate_there_and_back(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    config_before = (repo / ".git" / "config").read_text()
    refs, logs = _state(capfd, repo)
    # MERGE_HEAD is a special ref: not listed (Git 2.55 does not either)
    assert "FOO_HEAD" in refs and "MERGE_HEAD" not in refs and logs
    status, out, err = _out(capfd, repo, "refs", "migrate", "--ref-format=reftable")
    assert (status, out, err) == (0, "", "")
    git_dir = repo / ".git"
    assert (git_dir / "HEAD").read_text() == "ref: refs/heads/.invalid\n"
    assert (git_dir / "refs" / "heads").read_text() == "this repository uses the reftable format\n"
    for gone in ("packed-refs", "logs", "FOO_HEAD", "ORIG_HEAD"):
        assert not (git_dir / gone).exists(), gone
    assert (git_dir / "MERGE_HEAD").is_file()  # a special ref, left alone like Git
    assert not list(git_dir.glob("ref_migration.*"))
    assert "\trepositoryformatversion = 1\n" in (git_dir / "config").read_text()
    assert (git_dir / "config").read_text().endswith("[extensions]\n\trefstorage = reftable\n")
    assert Repository(repo).ref_storage == "reftable"
    assert _state(capfd, repo) == (refs, logs)
    dangling = Repository(repo).refs.read("BROKEN_HEAD")
    assert dangling is not None and dangling.target == "refs/heads/nonexistent"
    assert _out(capfd, repo, "refs", "verify")[0] == 0

    status, out, err = _out(capfd, repo, "refs", "migrate", "--ref-format=files")
    assert (status, out, err) == (0, "", "")
    assert (git_dir / "config").read_text() == config_before  # as Git: back to version 0
    assert _state(capfd, repo) == (refs, logs)
    assert (git_dir / "packed-refs").is_file() and not (git_dir / "reftable").exists()
    # and git (2.39, files only) reads the result as it read the original
    assert git("-C", repo, "for-each-ref", FER).decode() in refs
    assert git("-C", repo, "rev-parse", "HEAD", "v1", "side")
    assert _out(capfd, repo, "refs", "verify")[0] == 0


def test_migrate_no_reflog_and_dry_run(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    refs, _logs = _state(capfd, repo)
    status, out, _ = _out(capfd, repo, "refs", "migrate", "--dry-run", "--ref-format=reftable")
    assert status == 0
    m = re.fullmatch(
        r"Finished dry-run migration of refs, the result can be found at "
        r"'(\.git/ref_migration\.[^']+)'\n",
        out,
    )
    assert m is not None, out
    assert (repo / m.group(1) / "reftable" / "tables.list").is_file()
    assert Repository(repo).ref_storage == "files"
    assert _out(capfd, repo, "refs", "migrate", "--no-reflog", "--ref-format=reftable")[0] == 0
    assert _state(capfd, repo) == (refs, {})


@pytest.mark.parametrize(
    "args, status, err",
    [
        (["foo"], 129, "usage: too many arguments\n"),
        ([], 129, "usage: missing --ref-format=<format>\n"),
        (["--ref-format=unknown"], 255, "error: unknown ref storage format 'unknown'\n"),
        (["--ref-format=files"], 255, "error: repository already uses 'files' format\n"),
    ],
)
def test_migrate_refusals_in_gits_words(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], args: list[str], status: int, err: str
) -> None:
    """Git 2.55's t1460 expectations."""
    repo = tmp_path / "repo"
    git("init", "-q", repo)
    assert _out(capfd, repo, "refs", "migrate", *args) == (status, "", err)


def test_migrate_refuses_worktrees(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    git("-C", repo, "worktree", "add", "-q", tmp_path / "wt")
    assert _out(capfd, repo, "refs", "migrate", "--ref-format=reftable") == (
        255,
        "",
        "error: migrating repositories with worktrees is not supported yet\n",
    )
    assert Repository(repo).ref_storage == "files"


def test_verify_files_like_git_255(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Each damaged loose ref and packed-refs line, with what Git 2.55 printed for it."""
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    head = git("-C", repo, "rev-parse", "HEAD").decode().strip()
    assert _out(capfd, repo, "refs", "verify") == (0, "", "")
    heads = repo / ".git" / "refs" / "heads"
    cases = {
        ".bad": (f"{head}\n", "error: refs/heads/.bad: badRefName: invalid refname format\n"),
        "nonl": (head, "warning: refs/heads/nonl: refMissingNewline: misses LF at the end\n"),
        "trail": (
            f"{head} garbage\n",
            "warning: refs/heads/trail: trailingRefContent: has trailing garbage: ' garbage\n'\n",
        ),
        "junk": ("zzz\n", "error: refs/heads/junk: badRefContent: zzz\n"),
        "badsym": (
            "ref: refs/heads/../x\n",
            "error: refs/heads/badsym: badReferentName: points to invalid refname "
            "'refs/heads/../x'\n",
        ),
        "sym2": (
            "ref: refs/heads/main \n",
            "warning: refs/heads/sym2: trailingRefContent: has trailing whitespaces or newlines\n",
        ),
        "sym3": (
            "ref: HEADX\n",
            "error: refs/heads/sym3: badReferentName: points to invalid refname 'HEADX'\n",
        ),
        "sym6": (
            "ref: logs/x\n",
            "warning: refs/heads/sym6: symrefTargetIsNotARef: points to non-ref target 'logs/x'\n",
        ),
    }
    for name, (content, message) in cases.items():
        (heads / name).write_text(content)
        status, out, err = _out(capfd, repo, "refs", "verify")
        assert (out, err) == ("", message), name
        assert status == (255 if message.startswith("error") else 0), name
        (heads / name).unlink()
    status, _, err = _out(capfd, repo, "refs", "verify", "--verbose")
    assert err == (
        "Checking references consistency\nChecking refs/heads/main\nChecking HEAD\n"
        "Checking packed-refs file .git/packed-refs\n"
    )
    packed = repo / ".git" / "packed-refs"
    packed.write_text(
        "# pack-refs with: peeled fully-peeled sorted \n"
        f"{head} refs/heads/a..b\n"
        f"{head}refs/heads/q\n"
        f"{head} refs/tags/v1\n^{head}x\n"
        f"^{head}\n"
        f"zzz refs/heads/z\n"
        f"{head}"
    )
    status, _, err = _out(capfd, repo, "refs", "verify")
    assert status == 255
    assert err == (
        "error: packed-refs line 2: badRefName: has bad refname 'refs/heads/a..b'\n"
        f"error: packed-refs line 3: badPackedRefEntry: has no space after oid '{head}' but with "
        "'refs/heads/q'\n"
        "error: packed-refs line 5: badPackedRefEntry: has trailing garbage after peeled oid 'x'\n"
        f"error: packed-refs line 6: badPackedRefEntry: '^{head}' has invalid oid\n"
        "error: packed-refs line 7: badPackedRefEntry: 'zzz refs/heads/z' has invalid oid\n"
        f"error: packed-refs line 8: packedRefEntryNotTerminated: '{head}' is not terminated "
        "with a newline\n"
        f"error: packed-refs line 8: badPackedRefEntry: has no space after oid '{head}' "
        "but with ''\n"
    )
    packed.write_text(
        "# pack-refs with: peeled fully-peeled sorted \n"
        f"{head} refs/heads/zz\n{head} refs/heads/aa\n{head} refs/heads/main\n"
    )
    assert _out(capfd, repo, "refs", "verify") == (
        255,
        "",
        "error: packed-refs line 3: packedRefUnsorted: refname 'refs/heads/aa' is less than "
        "previous refname 'refs/heads/zz'\n",
    )
    packed.write_text(f"{head} refs/heads/zz\n{head} refs/heads/aa\n")  # not said sorted
    assert _out(capfd, repo, "refs", "verify") == (0, "", "")
    (heads / "lnk").symlink_to("../../HEAD")
    assert _out(capfd, repo, "refs", "verify") == (
        0,
        "",
        "warning: refs/heads/lnk: symlinkRef: use deprecated symbolic link for symref\n",
    )
    (heads / "lnk").unlink()
    packed.write_text("# bogus header\n")
    assert _out(capfd, repo, "refs", "verify")[2] == (
        "error: packed-refs.header: badPackedRefHeader: '# bogus header' does not start with "
        "'# pack-refs with: '\n"
    )
    packed.write_text("")
    assert _out(capfd, repo, "refs", "verify") == (
        0,
        "",
        "warning: packed-refs: emptyPackedRefsFile: file is empty\n",
    )


def test_refs_list_exists_optimize(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    assert _out(capfd, repo, "refs", "list", FER)[1] == _out(capfd, repo, "for-each-ref", FER)[1]
    assert _out(capfd, repo, "refs", "exists", "refs/heads/side") == (0, "", "")
    assert _out(capfd, repo, "refs", "exists", "refs/heads/nope") == (
        2,
        "",
        "error: reference does not exist\n",
    )
    assert _out(capfd, repo, "refs", "exists") == (
        128,
        "",
        "fatal: 'git refs exists' requires a reference\n",
    )
    assert (repo / ".git" / "refs" / "heads" / "main").is_file()
    assert _out(capfd, repo, "refs", "optimize", "--all")[0] == 0
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    status, out, _ = _out(capfd, repo, "refs", "optimize", "-h")
    assert status == 129 and out.startswith("usage: gitodb refs optimize [--all]")
    status, _, err = _out(capfd, repo, "refs")
    assert status == 129 and err.startswith("error: need a subcommand\nusage: gitodb refs migrate")
    assert os.path.isdir(repo)
