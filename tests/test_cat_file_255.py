"""cat-file as Git 2.55 has it: options and usage messages, -Z, %(objectmode),
--follow-symlinks, --filter, replace refs, submodule entries, flush rules.

Where the `git` on PATH (2.39) has the feature it is the oracle; the rest are
Git 2.55's outputs, recorded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env


def gitodb(
    *args: str, cwd: Path, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    e = git_env()
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=e,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def links(tmp_path_factory) -> Path:
    """The symlink layout of Git's t1006 ('prep for symlink tests')."""
    repo = tmp_path_factory.mktemp("links") / "r"
    git("init", "-q", repo)
    (repo / "dir/subdir").mkdir(parents=True)
    for rel in ("morx", "dir/ind1", "dir/subdir/ind2"):
        (repo / rel).write_bytes(b"Hello World")
    for target, name in [
        ("morx", "same-dir-link"),
        ("dir", "link-to-dir"),
        ("../fleem", "out-of-repo-link"),
        ("..", "out-of-repo-link-dir"),
        ("same-dir-link", "link-to-link"),
        ("nope", "broken-same-dir-link"),
        ("../morx", "dir/parent-dir-link"),
        ("..", "dir/link-dir"),
        ("../../escape", "dir/out-of-repo-link"),
        ("../..", "dir/out-of-repo-link-dir"),
        ("nope", "dir/broken-link-in-dir"),
        ("../../morx", "dir/subdir/grandparent-dir-link"),
        ("../../../great-escape", "dir/subdir/out-of-repo-link"),
        ("../../..", "dir/subdir/out-of-repo-link-dir"),
        ("../../../", "dir/subdir/out-of-repo-link-dir-trailing"),
        ("../parent-dir-link", "dir/subdir/parent-dir-link-to-link"),
        ("dir", "dirlink"),
        ("dir/subdir", "subdirlink"),
        ("subdir/ind2", "dir/link-to-child"),
        ("dir/link-to-child", "link-to-down-link"),
        ("dir/..", "up-down"),
        ("dir/../", "up-down-trailing"),
        ("dir/../morx", "up-down-file"),
        ("dir/../../morx", "up-up-down-file"),
        ("subdirlink/../../morx", "up-two-down-file"),
        ("loop1", "loop2"),
        ("loop2", "loop1"),
        ("/etc/passwd", "absolute"),
    ]:
        os.symlink(target, repo / name)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "test", cwd=repo)
    return repo


NAMES = [
    "morx",
    "nope",
    "same-dir-link",
    "link-to-dir/ind1",
    "broken-same-dir-link",
    "link-to-link",
    "dir/parent-dir-link",
    "dir/link-dir/morx",
    "dir/broken-link-in-dir",
    "dir/subdir/grandparent-dir-link/nope",
    "dir/subdir/grandparent-dir-link",
    "dir/subdir/parent-dir-link-to-link",
    "dirlink/morx",
    "dirlink/ind1",
    "subdirlink/morx",
    "subdirlink/ind2",
    "dir/link-to-child/morx",
    "dir/link-to-child",
    "link-to-down-link",
    "out-of-repo-link",
    "out-of-repo-link-dir",
    "dir/out-of-repo-link",
    "dir/out-of-repo-link-dir",
    "dir/subdir/out-of-repo-link",
    "dir/subdir/out-of-repo-link-dir",
    "dir/subdir/out-of-repo-link-dir-trailing",
    "up-down",
    "up-down-trailing",
    "up-down-file",
    "up-up-down-file",
    "up-two-down-file",
    "loop1",
    "absolute",
]


@pytest.mark.parametrize("batch", ["--batch-check", "--batch"])
def test_follow_symlinks_like_git(links, batch):
    request = "".join(f"HEAD:{n}\n" for n in NAMES).encode()
    want = git("cat-file", batch, "--follow-symlinks", cwd=links, input=request)
    p = gitodb("cat-file", batch, "--follow-symlinks", cwd=links, input=request)
    assert (p.returncode, p.stderr) == (0, b"")
    assert p.stdout == want


def test_nul_terminated_output(links):
    # Git 2.55: -Z ends input and output records with NUL (recorded)
    p = gitodb(
        "cat-file",
        "--batch-check",
        "--follow-symlinks",
        "-Z",
        cwd=links,
        input=b"HEAD:loop1\0HEAD:nope\0HEAD:morx\0",
    )
    blob = git("rev-parse", "HEAD:morx", cwd=links).strip()
    assert p.stdout == b"loop 10\0HEAD:loop1\0HEAD:nope missing\0" + blob + b" blob 11\0"
    p = gitodb("cat-file", "--batch", "-Z", cwd=links, input=b"HEAD:morx\0")
    assert p.stdout == blob + b" blob 11\0Hello World\0"


def test_objectmode(links):
    blob = git("rev-parse", "HEAD:morx", cwd=links).strip()
    tree = git("rev-parse", "HEAD:dir", cwd=links).strip()
    p = gitodb(
        "cat-file",
        "--batch-check=%(objectmode) %(objectname)",
        cwd=links,
        input=b"HEAD:morx\nHEAD:dir\n" + blob + b"\nHEAD:same-dir-link\n",
    )
    link = git("rev-parse", "HEAD:same-dir-link", cwd=links).strip()
    assert p.stdout == (
        b"100644 " + blob + b"\n040000 " + tree + b"\n " + blob + b"\n120000 " + link + b"\n"
    )


# Git 2.55's answers (stderr's first line, exit status), recorded.
USAGE_CASES = [
    ("-e -p", "error: options '-p' and '-e' cannot be used together", 129),
    ("-s --textconv", "error: options '--textconv' and '-s' cannot be used together", 129),
    (
        "--batch-all-objects -e",
        "error: options '-e' and '--batch-all-objects' cannot be used together",
        129,
    ),
    (
        "--path=foo --batch",
        "fatal: '--path=<path|tree-ish>' needs '--filters' or '--textconv'",
        129,
    ),
    ("--textconv", "fatal: <rev> required with '--textconv'", 129),
    ("-e", "fatal: <object> required with '-e'", 129),
    ("-e --follow-symlinks", "fatal: '--follow-symlinks' requires a batch mode", 129),
    ("--filters one two three", "fatal: too many arguments", 129),
    ("-Z commit HEAD", "fatal: '-Z' requires a batch mode", 129),
    ("--batch -t", "fatal: '-t' is incompatible with batch mode", 129),
    ("--batch --batch-check", "error: only one batch option may be specified", 129),
    ("--filter=unknown", "fatal: invalid filter-spec 'unknown'", 128),
    ("--filter=tree:1", "usage: objects filter not supported: 'tree'", 129),
    ("--filter=sparse:path=x", "fatal: sparse:path filters support has been dropped", 128),
    (
        "--filter=object:type=foo",
        "fatal: 'foo' for 'object:type=<type>' is not a valid object type",
        128,
    ),
    ("--filter=blob:none -p HEAD", "usage: objects filter only supported in batch mode", 129),
    ("--bogus", "error: unknown option `bogus'", 129),
]


@pytest.mark.parametrize("args, first, status", USAGE_CASES)
def test_usage_messages_like_git_255(links, args, first, status):
    p = gitodb("cat-file", *args.split(), cwd=links, input=b"")
    assert p.returncode == status
    assert p.stderr.decode().splitlines()[0] == first
    if first.startswith("fatal: ") and status == 129:
        assert b"\nusage: gitodb cat-file <type> <object>\n" in p.stderr


def test_abbreviated_long_options(links):
    blob = git("rev-parse", "HEAD:morx", cwd=links).strip()
    assert gitodb("cat-file", "--batch-ch", cwd=links, input=blob).stdout == blob + b" blob 11\n"
    p = gitodb(
        "cat-file",
        "--batch-ch",
        cwd=links,
        input=blob,
        env={"GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS": "true"},
    )
    assert (p.returncode, p.stderr) == (
        128,
        b"fatal: disallowed abbreviated or ambiguous option 'batch-ch'\n",
    )


def _all(repo: Path) -> list[tuple[str, str, int]]:
    out = git("cat-file", "--batch-all-objects", "--batch-check", cwd=repo).decode()
    return [(o, t, int(s)) for o, t, s in (line.split() for line in out.splitlines())]


@pytest.mark.parametrize(
    "spec, keep",
    [
        ("blob:none", lambda t, s: t != "blob"),
        ("blob:limit=11", lambda t, s: t != "blob" or s < 11),
        ("blob:limit=1k", lambda t, s: t != "blob" or s < 1024),
        ("object:type=tree", lambda t, s: t == "tree"),
    ],
)
def test_filter_batch_all_objects_and_excluded(links, spec, keep):
    objects = _all(links)
    want = "".join(f"{o}\n" for o, t, s in objects if keep(t, s)).encode()
    p = gitodb(
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname)",
        f"--filter={spec}",
        cwd=links,
    )
    assert p.stdout == want
    request = "".join(f"{o}\n" for o, _t, _s in objects).encode()
    p = gitodb(
        "cat-file", "--batch-check=%(objectname)", f"--filter={spec}", cwd=links, input=request
    )
    assert (
        p.stdout
        == "".join(f"{o}\n" if keep(t, s) else f"{o} excluded\n" for o, t, s in objects).encode()
    )
    p = gitodb(
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname)",
        f"--filter={spec}",
        "--no-filter",
        cwd=links,
    )
    assert p.stdout == "".join(f"{o}\n" for o, _t, _s in objects).encode()


def test_replace_refs_are_honoured_for_named_objects(tmp_path):
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "test", cwd=repo)
    orig = git("rev-parse", "HEAD", cwd=repo).strip().decode()
    fake_body = git("cat-file", "commit", orig, cwd=repo) + b"extra\n"
    fake = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=fake_body)
    git("replace", orig, fake.strip().decode(), cwd=repo)
    for args in (["--batch"], ["--batch-check"]):
        want = git("cat-file", *args, cwd=repo, input=orig.encode())
        assert gitodb("cat-file", *args, cwd=repo, input=orig.encode()).stdout == want
    assert gitodb("cat-file", "-p", orig, cwd=repo).stdout == fake_body
    # listing every object ignores replacement, and so does GIT_NO_REPLACE_OBJECTS
    listed = gitodb("cat-file", "--batch-all-objects", "--batch-check", cwd=repo).stdout
    assert listed == git("cat-file", "--batch-all-objects", "--batch-check", cwd=repo)
    p = gitodb("cat-file", "-p", orig, cwd=repo, env={"GIT_NO_REPLACE_OBJECTS": "1"})
    assert p.stdout == fake_body[: -len(b"extra\n")]


def test_gitlink_entry_is_a_submodule(tmp_path):
    repo = tmp_path / "r"
    git("init", "-q", repo)
    tree = git("mktree", cwd=repo, input=b"160000 commit " + b"de" * 20 + b"\tsub\n").strip()
    request = tree + b":sub\n"
    # Git 2.55 (t1006 'batch-check with a submodule'); 2.39 said "missing"
    assert (
        gitodb("cat-file", "--batch-check", cwd=repo, input=request).stdout
        == b"de" * 20 + b" submodule\n"
    )


def test_no_flush_on_exit_drops_unflushed_commands(links):
    blob = git("rev-parse", "HEAD:morx", cwd=links).strip()
    env = {"GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT": "1"}
    p = gitodb(
        "cat-file", "--batch-command", "--buffer", cwd=links, env=env, input=b"info " + blob + b"\n"
    )
    assert (p.returncode, p.stdout) == (0, b"")
    p = gitodb(
        "cat-file",
        "--batch-command",
        "--buffer",
        cwd=links,
        env=env,
        input=b"info " + blob + b"\nflush\n",
    )
    assert p.stdout == blob + b" blob 11\n"


def test_invalid_type_message_names_no_file(tmp_path):
    repo = tmp_path / "r"
    git("init", "-q", repo)
    oid = (
        git("hash-object", "-t", "bogus", "--literally", "-w", "--stdin", cwd=repo, input=b"x")
        .strip()
        .decode()
    )
    for mode in ("-t", "-s", "-p"):
        p = gitodb("cat-file", mode, oid[:10], cwd=repo)
        assert (p.returncode, p.stderr) == (128, b"fatal: invalid object type\n")


def test_overlong_header_messages_like_git_255(tmp_path):
    import hashlib
    import zlib

    repo = tmp_path / "r"
    git("init", "-q", repo)
    body = b"abcdefghijklmnopqrstuvwxyz1234679 5\0bogus"
    oid = hashlib.sha1(body).hexdigest()
    (repo / ".git/objects" / oid[:2]).mkdir()
    (repo / ".git/objects" / oid[:2] / oid[2:]).write_bytes(zlib.compress(body))
    err = f"error: header for {oid} too long, exceeds 32 bytes\n"
    for args, fatal in (
        (["-t", oid], "fatal: git cat-file: could not get object info"),
        (["-s", oid], "fatal: git cat-file: could not get object info"),
        (["-p", oid], f"fatal: Not a valid object name {oid}"),
        (
            ["blob", oid],
            f"fatal: loose object {oid} (stored in .git/objects/{oid[:2]}/{oid[2:]}) is corrupt",
        ),
    ):
        p = gitodb("cat-file", *args, cwd=repo)
        assert (p.returncode, p.stdout, p.stderr.decode()) == (128, b"", err + fatal + "\n")
    p = gitodb("cat-file", "--batch-check", cwd=repo, input=oid.encode())
    assert (p.returncode, p.stdout, p.stderr.decode()) == (0, f"{oid} missing\n".encode(), err)
