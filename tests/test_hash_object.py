"""``gitodb hash-object`` against ``git hash-object``: ids, output, errors, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import as_gitodb, git, git_env

T1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=git_env())
    return proc.returncode, proc.stdout, proc.stderr


def ours(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    return run([sys.executable, "-m", "gitodb", "hash-object", *args], cwd, stdin)


def theirs(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    status, out, err = run(["git", "hash-object", *args], cwd, stdin)
    return status, as_gitodb(out), as_gitodb(err)


def same_as_git(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    expected = theirs(args, cwd, stdin)
    assert ours(args, cwd, stdin) == expected, args
    return expected


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with a few files, a directory and a subdirectory."""
    r = tmp_path_factory.mktemp("ho")
    git("init", "-q", r)
    (r / "f").write_bytes(b"x")
    (r / "d").mkdir()
    (r / "sub").mkdir()
    (r / "sub" / "f").write_bytes(b"sub file\n")
    (r / "crlf").write_bytes(b"a\r\nb\r\n")
    (r / "c").write_bytes(f"tree {T1}\nauthor A <a@b> 1 +0000\n\nm\n".encode())
    (r / ".gitattributes").write_bytes(b"")
    return r


USAGE_CASES = [
    "-t foo f",
    "-t commit f",
    "-t tag f",
    "-t tree f",
    "nonexist",
    "-w nonexist",
    "d",
    "-w d",
    "--no-filters d",
    "--path=zz d",
    "--stdin --stdin",
    "--stdin-paths --stdin",
    "--stdin-paths f",
    "--stdin-paths --path=x",
    "--path=x --no-filters f",
    "",
    "--bogus",
    "-t",
    "--filters f",
    "--no-stdin f",
    "--path f",
    "-tblob f",
    "-wt blob f",
    "--st f",
    "-- -f",
    "f -w",
    "--no-literally f",
    "--no-w f",
    "-h",
    "--stdin=3",
    "--literally=1 f",
    "--no-no-filters f",
    "--t=blob f",
    "-x f",
    "--no-",
    "--no-st",
    "--no-stdin-p f",
    "--end-of-options -w",
    "f -h",
    "f d f",
    "-wx f",
    "--path",
    "--no-path=3 f",
    "--pa=f",
    "-t commit c",
    "--literally -t commit f",
    "-t blob crlf",
    "--path=crlf f",
    "--help-all",
]


@pytest.mark.parametrize("args", USAGE_CASES)
def test_options_output_and_errors_match_git(work: Path, args: str) -> None:
    same_as_git(args.split(), work)


def test_literally_accepts_any_content_of_a_known_type(work: Path) -> None:
    for t in ["commit", "tree", "tag", "blob"]:
        assert same_as_git(["--literally", "-t", t, "f"], work)[0] == 0
        assert same_as_git(["--literally", "-t", t, "--stdin"], work, b"random\0junk")[0] == 0


@pytest.mark.parametrize("t", ["foo", "", "a b"])
def test_literally_refuses_unknown_types_like_git_255(work: Path, t: str) -> None:
    # Git 2.55 (t1007 '--literally complains about non-standard types'); 2.39 hashed them
    for extra in (["f"], ["-w", "--stdin"]):
        assert ours(["--literally", "-t", t, *extra], work, b"junk") == (
            128,
            b"",
            f'fatal: invalid object type "{t}"\n'.encode(),
        )


def test_stdin_and_stdin_paths(work: Path) -> None:
    same_as_git(["--stdin"], work, b"hello\n")
    same_as_git(["--stdin", "f", "crlf"], work, b"")
    same_as_git(["-t", "commit", "--stdin"], work, (work / "c").read_bytes())
    same_as_git(["-t", "commit", "--stdin"], work, b"bad")
    same_as_git(["--stdin-paths"], work, b'f\ncrlf\r\n"f"\n"sub/\\146"trail\n')
    same_as_git(["--stdin-paths"], work, b'f\n"bad\\q"\nf\n')
    same_as_git(["--stdin-paths"], work, b"f\nnonexist\n")
    same_as_git(["--stdin-paths", "--no-filters"], work, b"d\n")


def test_paths_from_a_subdirectory(work: Path) -> None:
    """File arguments are relative to the cwd; --stdin-paths ones (Git 2.39) to the top."""
    sub = work / "sub"
    same_as_git(["f", "../f"], sub)
    same_as_git(["nonexist"], sub)
    same_as_git(["--stdin-paths"], sub, b"f\n")
    same_as_git(["--path=x", "d"], work)
    same_as_git(["../d"], sub)


def test_outside_a_repository(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"outside")
    env_dir = tmp_path
    assert same_as_git(["f"], env_dir)[0] == 0
    assert same_as_git(["-w", "f"], env_dir)[0] == 128


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_ids_for_every_type_and_size(tmp_path: Path, fmt: str) -> None:
    git("init", "-q", f"--object-format={fmt}", tmp_path)
    empty_tree = git("write-tree", cwd=tmp_path).strip().decode()
    commit = git("commit-tree", "-m", "m", empty_tree, cwd=tmp_path).strip().decode()
    contents = {
        "blob": [b"", b"a", os.urandom(100), os.urandom(70_001), b"\0" * (1 << 20) + b"x"],
        "tree": [
            b"",
            git("cat-file", "tree", empty_tree, cwd=tmp_path),
            b"100644 a\0" + os.urandom(32 if fmt == "sha256" else 20),
        ],
        "commit": [git("cat-file", "commit", commit, cwd=tmp_path)],
        "tag": [f"object {commit}\ntype commit\ntag v\ntagger A <a@b> 1 +0000\n\nm\n".encode()],
    }
    for type_name, items in contents.items():
        names = []
        for i, data in enumerate(items):
            names.append(f"{type_name}{i}")
            (tmp_path / names[-1]).write_bytes(data)
        # One run hashes all files of a type (and the last one again from stdin).
        assert (
            same_as_git(["-t", type_name, "--stdin", *names], tmp_path, items[-1])[1].count(b"\n")
            == len(items) + 1
        )
    same_as_git(["--stdin-paths"], tmp_path, b"blob0\nblob3\n")


@pytest.mark.parametrize("threshold", ["1k", "512m"])
def test_big_file_threshold_ids(work: Path, threshold: str) -> None:
    (work / "big").write_bytes(os.urandom(5000))
    for extra in (["big"], ["--stdin"], ["--literally", "-t", "commit", "big"]):
        expected = theirs(["big"] if extra == ["--stdin"] else extra, work)
        stdin = (work / "big").read_bytes() if extra == ["--stdin"] else b""
        got = run(
            [
                sys.executable,
                "-m",
                "gitodb",
                "-c",
                f"core.bigFileThreshold={threshold}",
                "hash-object",
                *extra,
            ],
            work,
            stdin,
        )
        assert got == expected


def test_bad_config_values_match_git(work: Path) -> None:
    for setting in [
        "core.compression=12",
        "core.looseCompression=-2",
        "pack.compression=10",
        "core.bigFileThreshold=1x",
        "core.bigFileThreshold=-5",
    ]:
        expected = run(["git", "-c", setting, "hash-object", "f"], work)
        assert (
            run([sys.executable, "-m", "gitodb", "-c", setting, "hash-object", "f"], work)
            == expected
        )


def test_help_says_which_filters_are_applied(work: Path) -> None:
    status, out, _err = ours(["--help"], work)
    assert status == 129
    assert out.startswith(b"usage: gitodb hash-object [-t <type>]")
    assert b"clean command, line endings" in out and b'"process" protocol' in out


OPTION_TOKENS = [
    "-t",
    "blob",
    "commit",
    "x",
    "--lit",
    "--literally",
    "--no-",
    "--no-lit",
    "--path",
    "--pa=f",
    "--no-path",
    "--no-filters",
    "--filters",
    "--filters=1",
    "-tx",
    "-wh",
    "--",
    "f",
    "c",
    "d",
    "missing",
    "-",
    "--st",
    "--stdin-p",
    "--no-stdin",
    "-x",
    "--end-of-options",
    "--path=c",
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(OPTION_TOKENS), max_size=5))
def test_option_parsing_differential_fuzz(
    work: Path,
    capfdbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    tokens: list[str],
) -> None:
    """Random option soups (nothing that reads stdin or writes) give Git's bytes and status."""
    if "--stdin-p" in tokens and "--" not in tokens[: tokens.index("--stdin-p")]:
        return  # would read paths from stdin
    if any(t in ("--lit", "--literally") for t in tokens) and (
        "-tx" in tokens
        or any(
            a == "-t" and b not in ("blob", "commit")
            for a, b in zip(tokens, tokens[1:], strict=False)
        )
    ):
        return  # an unknown type with --literally: Git 2.55 refuses, 2.39 (the oracle) hashes
    from gitodb.cli.main import main

    monkeypatch.chdir(work)
    expected = theirs(tokens, work)
    capfdbinary.readouterr()
    status = main(["hash-object", *tokens])
    out, err = capfdbinary.readouterr()
    assert (status, out, err) == expected, tokens


@pytest.mark.e2e
@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_written_objects_pass_fsck_and_cat_file(tmp_path: Path, fmt: str) -> None:
    """-w for every type: git reads each object back and fsck --strict is clean."""
    git("init", "-q", f"--object-format={fmt}", tmp_path)
    (tmp_path / "b").write_bytes(b"blob content\n")
    blob = ours(["-w", "b"], tmp_path)[1].strip().decode()
    tree_data = b"100644 b\0" + bytes.fromhex(blob)
    (tmp_path / "t").write_bytes(tree_data)
    tree = ours(["-w", "-t", "tree", "t"], tmp_path)[1].strip().decode()
    commit_data = (
        f"tree {tree}\nauthor A U Thor <a@example.com> 1700000000 +0000\n"
        f"committer C O Mitter <c@example.com> 1700000000 +0000\n\nmsg\n"
    ).encode()
    status, out, err = ours(["-w", "-t", "commit", "--stdin"], tmp_path, commit_data)
    assert status == 0, err
    commit = out.strip().decode()
    tag_data = (
        f"object {commit}\ntype commit\ntag v1\n"
        f"tagger A U Thor <a@example.com> 1700000000 +0000\n\nt\n"
    ).encode()
    (tmp_path / "tag").write_bytes(tag_data)
    tag = ours(["-w", "-t", "tag", "tag"], tmp_path)[1].strip().decode()
    expected = {
        blob: (b"blob", b"blob content\n"),
        tree: (b"tree", tree_data),
        commit: (b"commit", commit_data),
        tag: (b"tag", tag_data),
    }
    for oid, (type_name, data) in expected.items():
        assert git("cat-file", "-t", oid, cwd=tmp_path).strip() == type_name
        assert git("cat-file", type_name.decode(), oid, cwd=tmp_path) == data
        assert (
            git("hash-object", "-t", type_name.decode(), "--stdin", cwd=tmp_path, input=data)
            .strip()
            .decode()
            == oid
        )
    git("update-ref", "refs/tags/v1", tag, cwd=tmp_path)
    git("fsck", "--strict", "--full", "--no-dangling", cwd=tmp_path)
    assert not list((tmp_path / ".git" / "objects").rglob("tmp_*"))
