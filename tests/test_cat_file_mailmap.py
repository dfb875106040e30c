"""``cat-file --use-mailmap`` (t4203): commits' and tags' identities mapped in every
mode, sizes those of the mapped content, and ``--batch-command``'s ``mailmap <bool>``.

The single-object modes are compared with the ``git`` on PATH (2.39); the sizes and
the batch modes with Git 2.55 (2.39 printed the stored sizes, and had no ``mailmap``
command), skipped without ``../shared``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects.mailmap import Mailmap, map_idents
from helpers import git, git_env

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
needs_255 = pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")


def _run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=git_env())
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Commits by an author and a committer that the work tree's .mailmap maps (one
    each, one both), a commit nobody maps, and annotated tags."""
    r = tmp_path_factory.mktemp("mm") / "r"
    git("init", "-q", r)
    who = [
        ("Orig", "orig@example.com", "Orig", "orig@example.com"),
        ("Other", "other@example.com", "C O Mitter", "committer@example.com"),
        ("Nobody", "nobody@example.com", "Nobody", "nobody@example.com"),
    ]
    for i, (an, ae, cn, ce) in enumerate(who):
        env = {
            "GIT_AUTHOR_NAME": an,
            "GIT_AUTHOR_EMAIL": ae,
            "GIT_COMMITTER_NAME": cn,
            "GIT_COMMITTER_EMAIL": ce,
        }
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", f"c{i}"],
            cwd=r,
            env={**git_env(), **env},
            check=True,
        )
        subprocess.run(
            ["git", "tag", "-a", "-m", f"t{i}", f"v{i}"],
            cwd=r,
            env={**git_env(), **env},
            check=True,
        )
    (r / ".mailmap").write_text(
        "A U Thor <author@example.com> Orig <orig@example.com>\n"
        "Mapped Committer <mapped@example.com> C O Mitter <committer@example.com>\n"
        "<other-new@example.com> <other@example.com>\n"
    )
    return r


@pytest.mark.parametrize("opt", ["--use-mailmap", "--mailmap", "--no-mailmap"])
@pytest.mark.parametrize(
    "args",
    [
        ["commit", "HEAD~2"],
        ["commit", "HEAD~1"],
        ["-p", "HEAD~2"],
        ["-p", "v0"],
        ["tag", "v1"],
        ["-p", "HEAD"],
        ["-t", "v0"],
    ],
)
def test_single_object_modes_match_git(repo: Path, opt: str, args: list[str]) -> None:
    cmd = ["cat-file", opt, *args]
    mine = _run([sys.executable, "-m", "gitodb", *cmd], repo)
    assert mine == _run(["git", *cmd], repo)


@needs_255
@pytest.mark.parametrize(
    "args,stdin",
    [
        (["-s", "HEAD~2"], b""),
        (["-s", "v1"], b""),
        (["--batch-check"], b"HEAD~2\nHEAD~1\nv0\nHEAD\n"),
        (["--batch"], b"HEAD~2\nv1\n"),
        (["--batch-check=%(objectsize) %(objecttype)"], b"HEAD~1\n"),
        (["--batch-all-objects", "--batch-check"], b""),
        (["--batch-all-objects", "--batch", "--unordered"], b""),
        (["--batch-command"], b"info HEAD~2\ncontents v0\n"),
    ],
)
def test_sizes_and_batch_modes_match_git_255(repo: Path, args: list[str], stdin: bytes) -> None:
    for opt in ("--use-mailmap", "--no-use-mailmap"):
        cmd = ["cat-file", opt, *args]
        mine = _run([sys.executable, "-m", "gitodb", *cmd], repo, stdin)
        assert mine == _run([str(GIT255), *cmd], repo, stdin), cmd


@needs_255
@pytest.mark.parametrize("buffer", [[], ["--buffer"]])
@pytest.mark.parametrize(
    "stdin",
    [
        b"info HEAD~2\nmailmap yes\ninfo HEAD~2\n",
        b"mailmap yes\ncontents v0\nmailmap no\ncontents v0\nmailmap TRUE\ninfo v0\n",
        b"mailmap on\nmailmap 0\ninfo HEAD~2\nmailmap 1\ninfo HEAD~1\n",
        b"mailmap \ninfo HEAD~2\n",
        b"info HEAD~2\nmailmap maybe\ninfo HEAD\n",
        b"mailmap\n",
    ],
)
def test_batch_command_mailmap_switch_matches_git_255(
    repo: Path, buffer: list[str], stdin: bytes
) -> None:
    if buffer:
        stdin += b"flush\n"
    for opt in ([], ["--mailmap"]):
        cmd = ["cat-file", *opt, "--batch-command", *buffer]
        mine = _run([sys.executable, "-m", "gitodb", *cmd], repo, stdin)
        assert mine == _run([str(GIT255), *cmd], repo, stdin), (cmd, stdin)


def test_map_idents_rewrites_only_header_identities() -> None:
    m = Mailmap()
    m.read(b"New <new@example.com> <old@example.com>\n")
    commit = (
        b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
        b"author Old <OLD@example.com> 1 +0100\n"
        b"committer Keep <keep@example.com> 2 +0000\n"
        b"\n"
        b"author Old <old@example.com> 3 +0000\n"
    )
    assert map_idents(m, "commit", commit) == commit.replace(
        b"author Old <OLD@example.com> 1", b"author New <new@example.com> 1", 1
    )
    tag = b"object x\ntype commit\ntag v\ntagger Old <old@example.com> 5 +0000\n\nmsg\n"
    assert map_idents(m, "tag", tag) == tag.replace(b"Old <old@", b"New <new@")
    assert map_idents(m, "blob", commit) == commit
    assert map_idents(Mailmap(), "commit", commit) == commit
