"""index-pack's fsck: message ids, severities (--strict=<id>=<severity>, --fsck-objects=),
--check-self-contained-and-connected, against ``git index-pack``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects.format import SHA1
from gitodb.objects.fsck import Fsck, FsckConfigError, FsckSeverities
from helpers import git_env

pytestmark = pytest.mark.e2e

TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
GOOD_ID = "author A U Thor <a@example.com> 1700000000 +0000"
BAD_COMMITS = {
    "noemail": f"tree {TREE}\nauthor A U Thor\ncommitter A U Thor\n\nm\n",
    "baddate": f"tree {TREE}\nauthor A <a> x +0000\ncommitter A <a> 1 +0000\n\nm\n",
    "zeropad": f"tree {TREE}\nauthor A <a> 0123 +0000\ncommitter A <a> 1 +0000\n\nm\n",
    "badtz": f"tree {TREE}\nauthor A <a> 1 +00\ncommitter A <a> 1 +0000\n\nm\n",
    "twoauthors": f"tree {TREE}\n{GOOD_ID}\n{GOOD_ID}\ncommitter A <a> 1 +0000\n\nm\n",
    "noname": f"tree {TREE}\nauthor <a> 1 +0000\ncommitter A <a> 1 +0000\n\nm\n",
    "badname": f"tree {TREE}\nauthor A>b <a> 1 +0000\ncommitter A <a> 1 +0000\n\nm\n",
    "unterminated": f"tree {TREE}\n{GOOD_ID}\ncommitter A <a> 1 +0000",
}
BAD_TAGS = {
    "notagger": f"object {TREE}\ntype tree\ntag v1\n\nm\n",
    "badname": f"object {TREE}\ntype tree\ntag v..1\ntagger A <a> 1 +0000\n\nm\n",
    "extra": f"object {TREE}\ntype tree\ntag v1\ntagger A <a> 1 +0000\nx y\n\nm\n",
}
SEVERITY_ARGS = [
    [],
    ["--strict=missingEmail=ignore"],
    ["--strict=missingEmail=warn,badDate=ignore"],
    ["--strict=missingemail:ignore zeroPaddedDate=warn|badTimezone=ignore"],
    ["--strict=missingTaggerEntry=error"],
    ["--strict=extraHeaderEntry=error"],
    ["--strict=hasDotgit=ignore,badFilemode=error"],
    ["--strict=nosuch=warn"],
    ["--strict=missingEmail=nope"],
    ["--strict=missingEmail"],
    ["--strict=unterminatedHeader=warn"],
]


def _env() -> dict[str, str]:
    return git_env()


def _run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=_env())
    return p.returncode, p.stdout, p.stderr


def _pack_of(repo: Path, type_name: str, data: bytes) -> Path:
    oid = _run(["git", "hash-object", "--literally", "-t", type_name, "-w", "--stdin"], repo, data)
    name = _run(["git", "pack-objects", "p"], repo, oid[1])[1].decode().strip()
    return repo / f"p-{name}.pack"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("fsck") / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env())
    _run(["git", "hash-object", "-t", "tree", "-w", "--stdin"], r)
    _run(["git", "hash-object", "-w", "--stdin"], r)  # the empty blob the trees name
    return r


def _packs(repo: Path) -> list[Path]:
    packs = [_pack_of(repo, "commit", v.encode()) for v in BAD_COMMITS.values()]
    packs += [_pack_of(repo, "tag", v.encode()) for v in BAD_TAGS.values()]
    blob = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    trees = [
        b"100644 .git\0" + blob,
        b"100664 a\0" + blob + b"100755 b\0" + blob,
        b"100644 b\0" + blob + b"100644 a\0" + blob,
        b"100644 a\0" + blob + b"100644 a\0" + blob,
        b"0100644 a\0" + blob,
        b"100644 a\0" + bytes(20),
    ]
    packs += [_pack_of(repo, "tree", t) for t in trees]
    return packs


@pytest.mark.parametrize("args", SEVERITY_ARGS, ids=lambda a: " ".join(a) or "strict")
def test_index_pack_strict_severities_like_git(repo: Path, args: list[str]) -> None:
    for pack in _packs(repo):
        cmd = ["index-pack", *(args or ["--strict"]), "-o", str(repo / "x.idx"), pack.name]
        theirs = _run(["git", *cmd], repo)
        ours = _run([sys.executable, "-m", "gitodb", *cmd], repo)
        assert ours == theirs, (pack.name, args)


def test_fsck_objects_takes_severities_too(repo: Path) -> None:
    # --fsck-objects=<msg-id>=<severity> is Git 2.55's (2.39 refuses it): t5300 36
    pack = _pack_of(repo, "commit", BAD_COMMITS["noemail"].encode())
    ours = [sys.executable, "-m", "gitodb", "index-pack", "-o", str(repo / "x.idx")]
    status, _out, err = _run([*ours, "--fsck-objects", pack.name], repo)
    assert status == 128 and b"missingEmail" in err
    status, out, err = _run([*ours, "--fsck-objects=missingEmail=ignore", pack.name], repo)
    assert status == 0 and err == b"" and out.strip() == pack.name[2:-5].encode()


def test_check_self_contained_and_connected(tmp_path: Path) -> None:
    # exit 1 when a linked object is only in the repository; missing: fatal
    src = tmp_path / "src"
    subprocess.run(["git", "init", "-q", str(src)], check=True, env=_env())
    for name in ("a", "b"):
        (src / name).write_text(name)
        _run(["git", "add", name], src)
        _run(["git", "commit", "-qm", name], src)
    full = _run(["git", "pack-objects", "--revs", "--stdout"], src, b"HEAD\n")[1]
    part = _run(["git", "pack-objects", "--revs", "--stdout"], src, b"HEAD\n^HEAD~1\n")[1]
    (src / "full.pack").write_bytes(full)
    (src / "part.pack").write_bytes(part)
    for pack in ("full.pack", "part.pack"):
        for opt in ("--check-self-contained-and-connected", "--strict"):
            cmd = ["index-pack", opt, "-o", str(tmp_path / "x.idx"), pack]
            theirs = _run(["git", *cmd], src)
            assert _run([sys.executable, "-m", "gitodb", *cmd], src) == theirs
    assert (
        _run(
            [
                "git",
                "index-pack",
                "--check-self-contained-and-connected",
                "-o",
                str(tmp_path / "x.idx"),
                "part.pack",
            ],
            src,
        )[0]
        == 1
    )


def test_gitattributes_blob_checks(tmp_path: Path) -> None:
    # a tree naming a .gitattributes blob with an overlong line: an error of index-pack's
    # fsck whether the blob comes before or after the tree in the pack
    r = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env())
    (r / ".gitattributes").write_bytes(b"*" * 3000 + b" text\n")
    _run(["git", "add", ".gitattributes"], r)
    _run(["git", "commit", "-qm", "m"], r)
    name = _run(["git", "pack-objects", "--revs", "p"], r, b"HEAD\n")[1].decode().strip()
    cmd = ["index-pack", "--strict", "-o", str(tmp_path / "x.idx"), f"p-{name}.pack"]
    theirs = _run(["git", *cmd], r)
    assert theirs[0] == 128 and b"gitattributesLineLength" in theirs[2]
    assert _run([sys.executable, "-m", "gitodb", *cmd], r) == theirs


def test_gitattributes_blob_outside_a_repository(tmp_path: Path) -> None:
    # Git 2.55 (t5302): a queued blob cannot be read without a repository
    r = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env())
    missing = "0" * 39 + "1"
    tree = _run(
        ["git", "mktree", "--missing"], r, f"100644 blob {missing}\t.gitattributes\n".encode()
    )
    name = _run(["git", "pack-objects", "p"], r, tree[1])[1].decode().strip()
    outside = tmp_path / "outside"
    outside.mkdir()
    env_cmd = [
        sys.executable,
        "-m",
        "gitodb",
        "index-pack",
        "--fsck-objects",
        str(r / f"p-{name}.pack"),
    ]
    p = subprocess.run(
        env_cmd,
        cwd=outside,
        capture_output=True,
        env={**_env(), "GIT_CEILING_DIRECTORIES": str(tmp_path)},
    )
    assert p.returncode == 128
    assert p.stderr == b"fatal: cannot perform queued object checks outside of a repository\n"
    # in the repository the blob is looked up and reported missing
    status, _out, err = _run(
        [
            sys.executable,
            "-m",
            "gitodb",
            "index-pack",
            "--fsck-objects",
            "-o",
            str(tmp_path / "y.idx"),
            f"p-{name}.pack",
        ],
        r,
    )
    assert status == 128
    assert (
        err
        == (
            f"error: object {missing}: gitattributesMissing: unable to read .gitattributes blob\n"
            "fatal: fsck error in pack objects\n"
        ).encode()
    )


def test_severity_parsing_and_config() -> None:
    sev = FsckSeverities(strict=True)
    assert sev.of("hasDotgit") == "error" and sev.of("badFilemode") == "info"
    sev.parse("HASDOTGIT=ignore, badfilemode:error")
    assert sev.of("hasDotgit") == "ignore" and sev.of("badFilemode") == "error"
    for bad, message in (
        ("x=warn", "Unhandled message id: x"),
        ("badDate=fatal", "Unknown fsck message type: 'fatal'"),
        ("nulInHeader=ignore", "Cannot demote nulinheader to ignore"),
        ("badDate", "Missing '=': 'baddate'"),
    ):
        with pytest.raises(FsckConfigError, match=message):
            sev.parse(bad)

    class Config:
        def keys(self, prefix: str) -> list[str]:
            return [
                k
                for k in ("fetch.fsck.missingemail", "fetch.fsck.skiplist")
                if k.startswith(prefix)
            ]

        def get(self, key: str) -> str:
            # a skip list is a file of ids (here: none listed)
            return os.devnull if key.endswith("skiplist") else "ignore"

    sev = FsckSeverities()
    sev.apply_config(Config(), "fetch.fsck.")
    assert sev.skip == set()
    seen: list[str] = []
    commit = BAD_COMMITS["noemail"].encode()
    assert Fsck(SHA1, sev, seen.append).check("commit", commit, b"\1" * 20) is False
    assert seen == []
    assert Fsck(SHA1, FsckSeverities(), seen.append).check("commit", commit, b"\1" * 20)
    assert seen[0] == (
        "error: object "
        + "01" * 20
        + ": missingEmail: invalid author/committer line - missing email"
    )


def test_large_pathname_takes_a_length() -> None:
    """``fsck.largePathname=<severity>:<length>`` (Git 2.55; t1450 45): the length a
    tree entry name may have, C's integer syntax with a unit; other ids take none."""
    tree = b"100644 abcdefghij\0" + b"\1" * 20
    seen: list[str] = []
    sev = FsckSeverities()
    assert Fsck(SHA1, sev, seen.append).check("tree", tree, b"\2" * 20) is False
    assert seen == []
    sev.parse("largePathname=error:5")
    assert sev.max_pathname == 5 and sev.of("largePathname") == "error"
    assert Fsck(SHA1, sev, seen.append).check("tree", tree, b"\2" * 20) is True
    assert seen == [
        "error: object " + "02" * 20 + ": largePathname: contains excessively large pathname"
    ]
    for text, length in (("warn:1k", 1024), ("warn:0x10", 16), ("warn:010", 8)):
        sev.set("largepathname", text)
        assert sev.max_pathname == length and sev.of("largePathname") == "warn"
    for bad, message in (
        ("largePathname=warn:abc", "unable to parse max tree entry len: abc"),
        ("largePathname=warn:", "unable to parse max tree entry len: $"),
        ("nullSha1=warn:10", "Unknown fsck message type: 'warn:10'"),
    ):
        with pytest.raises(FsckConfigError, match=message):
            FsckSeverities().parse(bad)
