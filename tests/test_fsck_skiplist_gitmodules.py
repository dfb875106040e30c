"""index-pack's fsck: ``--strict=skiplist=<file>`` and the ``.gitmodules`` checks
(gitmodulesName, gitmodulesUrl, gitmodulesPath, gitmodulesUpdate, gitmodulesParse,
gitmodulesSymlink, gitmodulesBlob), against ``git index-pack`` on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects.fsck import FsckConfigError, FsckSeverities
from gitodb.objects.submodule_rules import check_submodule_name, check_submodule_url
from gitodb.repo.gitmodules import parse_gitmodules
from helpers import git, git_env

pytestmark = pytest.mark.e2e


def _run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=git_env())
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("gm") / "src"
    git("init", "-q", r)
    return r


def _pack(src: Path, entries: list[tuple[str, str, bytes]]) -> bytes:
    """A pack of one commit whose tree holds ``entries`` ``(mode, name, blob content)``."""
    lines = []
    for mode, name, content in entries:
        blob = git("hash-object", "-w", "--stdin", cwd=src, input=content).strip().decode()
        kind = "tree" if mode == "040000" else "blob"
        if kind == "tree":
            blob = git("mktree", cwd=src, input=f"100644 blob {blob}\tx\n".encode()).strip()
            blob = blob.decode()
        lines.append(f"{mode} {kind} {blob}\t{name}\n")
    tree = git("mktree", cwd=src, input="".join(lines).encode()).strip().decode()
    commit = git("commit-tree", tree, "-m", "m", cwd=src).strip()
    return git("pack-objects", "--revs", "--stdout", cwd=src, input=commit + b"\n")


def _both(tmp_path: Path, pack: bytes, *args: str) -> None:
    """``index-pack <args> --stdin`` by git and by gitodb, each in a new repository."""
    results = []
    for name, cmd in (("git", ["git"]), ("gitodb", [sys.executable, "-m", "gitodb"])):
        repo = tmp_path / name
        git("init", "-q", repo)
        results.append(_run([*cmd, "index-pack", *args, "--stdin"], repo, pack))
    assert results[1] == results[0]


GITMODULES = [
    b'[submodule "../../x"]\n\tpath = x\n\turl = https://example.com/x\n',
    b'[submodule "a\\\\..\\\\b"]\n\turl = x\n',
    b'[submodule ""]\n\turl = x\n',
    b'[submodule "ok"]\n\tpath = -x\n\turl = https://example.com/x\n',
    b'[submodule "ok"]\n\tpath = x\n\turl = -u\n',
    b'[submodule "ok"]\n\tpath = x\n\turl = ../../:x\n',
    b'[submodule "ok"]\n\turl = ./%0ax\n',
    b'[submodule "ok"]\n\turl = https:///example.com/x\n',
    b'[submodule "ok"]\n\turl = https://example.com/%0a\n',
    b'[submodule "ok"]\n\turl = git://h/x%0a\n',
    b'[submodule "ok"]\n\tupdate = !rm -rf\n',
    b'[submodule "ok"\n\tpath = x\n',
    b'[submodule "ok"]\n\tpath = x\n\turl = https://u@[::1]:80/x\n',
    b"[core]\n\tbare = true\n",
]


@pytest.mark.parametrize("content", GITMODULES)
def test_gitmodules_checks_like_git(src: Path, tmp_path: Path, content: bytes) -> None:
    _both(tmp_path, _pack(src, [("100644", ".gitmodules", content)]), "--strict")


# Git 2.55 refuses these URLs (2.39 took them): its answers, recorded
URLS_255 = ["https://example.com:99999/x", "http::https://ex.com/%zz", "https://ex.com/%0"]


@pytest.mark.parametrize("url", URLS_255)
def test_gitmodules_urls_git_255_refuses(src: Path, tmp_path: Path, url: str) -> None:
    content = f'[submodule "ok"]\n\turl = {url}\n'.encode()
    blob = git("hash-object", "--stdin", cwd=src, input=content).strip().decode()
    git("init", "-q", tmp_path / "r")
    cmd = [sys.executable, "-m", "gitodb", "index-pack", "--strict", "--stdin"]
    got = _run(cmd, tmp_path / "r", _pack(src, [("100644", ".gitmodules", content)]))
    want = (
        f"error: object {blob}: gitmodulesUrl: disallowed submodule url: {url}\n"
        "fatal: fsck error in packed object\n"
    )
    assert got == (128, b"", want.encode())


def test_gitmodules_severities_and_skiplist(src: Path, tmp_path: Path) -> None:
    content = GITMODULES[0]
    pack = _pack(src, [("100644", ".gitmodules", content)])
    _both(tmp_path / "warn", pack, "--strict=gitmodulesName=warn")
    _both(tmp_path / "ignore", pack, "--strict=gitmodulesName=ignore")
    blob = git("hash-object", "--stdin", cwd=src, input=content).strip().decode()
    skip = tmp_path / "skip.txt"
    skip.write_text(f"# the bad blob\n  {blob}  # trailing comment\n\n")
    _both(tmp_path / "skip", pack, f"--strict=skiplist={skip}")


def test_gitmodules_symlink_and_tree(src: Path, tmp_path: Path) -> None:
    _both(tmp_path / "l", _pack(src, [("120000", ".gitmodules", b"x")]), "--strict")
    _both(tmp_path / "t", _pack(src, [("040000", ".gitmodules", b"x")]), "--strict")


def _bad_commit_pack(src: Path) -> tuple[bytes, str]:
    tree = git("mktree", cwd=src, input=b"").strip().decode()
    data = f"tree {tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> x +0000\n\nm\n".encode()
    oid = git("hash-object", "-t", "commit", "--literally", "-w", "--stdin", cwd=src, input=data)
    tree_and_commit = oid.strip() + b"\n" + tree.encode() + b"\n"
    return git("pack-objects", "--stdout", cwd=src, input=tree_and_commit), oid.strip().decode()


@pytest.mark.parametrize(
    "skiplist",
    [None, "", "/nonexistent/skip", "{oid}\n", "# c\n  {oid} # t\n", "{short}\n", "zzz\n"],
)
def test_skiplist_like_git(src: Path, tmp_path: Path, skiplist: str | None) -> None:
    pack, oid = _bad_commit_pack(src)
    if skiplist is None:
        arg = "--strict=skiplist"
    elif skiplist.startswith("/") or not skiplist:
        arg = f"--strict=skiplist={skiplist}"
    else:
        path = tmp_path / "skip"
        path.write_text(skiplist.format(oid=oid, short=oid[:8]))
        arg = f"--strict=SkipList={path},badTimezone=error"
    _both(tmp_path, pack, arg)


def test_rules_and_parser_directly() -> None:
    assert not check_submodule_name("..") and not check_submodule_name("a/../b")
    assert check_submodule_name("a..b") and not check_submodule_name("")
    assert check_submodule_url("https://example.com/x") and not check_submodule_url("-x")
    assert not check_submodule_url("../../../../:x") and check_submodule_url("../x")
    assert parse_gitmodules(b'[submodule "A.b"]\n\tURL = u\n') == [("submodule.A.b.url", "u")]
    assert parse_gitmodules(b"[submodule\n") is None
    sev = FsckSeverities(strict=True)
    with pytest.raises(FsckConfigError, match="skiplist requires a path"):
        sev.parse("skiplist")


def test_odd_pack_outside_the_object_directory(tmp_path: Path) -> None:
    """Git's t7450 'index-pack --strict works for non-repo pack': the .gitmodules blob
    comes before the tree naming it, and the pack is not in the repository, so the
    queued check reads the blob from the pack being indexed."""
    from gitodb.objects.format import SHA1
    from gitodb.pack.writer import PackWriter

    content = b'[submodule "../../modules/evil"]\n\tpath = x\n\turl = ./x\n'
    made = tmp_path / "made"
    with PackWriter(made, SHA1, expected_count=3, write_rev=False) as w:
        blob = w.add_object("blob", content)
        tree = w.add_object("tree", b"100644 .gitmodules\0" + blob)
        commit = f"tree {tree.hex()}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n"
        w.add_object("commit", commit.encode())
        written = w.finish()
    assert written is not None
    results = []
    for name, cmd in (("git", ["git"]), ("gitodb", [sys.executable, "-m", "gitodb"])):
        repo = tmp_path / name
        git("init", "-q", "--bare", repo)
        (repo / "odd.pack").write_bytes(Path(written.pack_path).read_bytes())
        results.append(_run([*cmd, "index-pack", "--strict", "odd.pack"], repo))
    assert results[1] == results[0]
    assert results[1][0] == 128 and b"gitmodulesName" in results[1][2]


HFS_NTFS_GITMODULES = [
    ".GITMODULES",
    ".gitmodules.",
    ".gitmodules ..",
    "gitmod~1",
    "GITMOD~4",
    "gitmod~5",
    "gi7eba~1",
    ".gitmodules:x",
    ".git\u200cmodules",
    ".gitmodules\ufeff",
    ".gitmodulesx",
]


@pytest.mark.parametrize("name", HFS_NTFS_GITMODULES)
def test_gitmodules_by_other_names_like_git(src: Path, tmp_path: Path, name: str) -> None:
    """Names HFS+ and NTFS read as .gitmodules are checked as .gitmodules."""
    _both(tmp_path, _pack(src, [("100644", name, GITMODULES[0])]), "--strict")


@pytest.mark.parametrize(
    "name", [".gitignore", ".mailmap", "gi250a~1", "maba30~2", ".GITIGNORE ", "GIT~1", ".g\u200cit"]
)
def test_special_symlinks_like_git(src: Path, tmp_path: Path, name: str) -> None:
    _both(tmp_path, _pack(src, [("120000", name, b"target")]), "--strict")
