"""rev-list's and log's options on the shared parser (``gitodb.cli.revopts``), and the
options added with it (``--children``, ``--exclude-hidden=``, ``--alternate-refs``),
compared with the ``git`` on PATH.

gitodb runs in-process (``run_cli``) so that the many cases stay quick.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import as_gitodb, git, git_env, run_cli


def _git(cwd: Path, *args: str) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=git_env(), check=False)
    return proc.returncode, as_gitodb(proc.stdout), as_gitodb(proc.stderr)


def _ours(
    cwd: Path, capfdbinary: pytest.CaptureFixture[bytes], *args: str
) -> tuple[int, bytes, bytes]:
    capfdbinary.readouterr()
    status = run_cli(cwd, *args)
    out, err = capfdbinary.readouterr()
    return status, out, err


def same(cwd: Path, capfdbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    """Assert gitodb exits and prints like git; return git's stdout."""
    theirs = _git(cwd, *args)
    ours = _ours(cwd, capfdbinary, *args)
    assert ours == theirs, args
    return theirs[1]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history with two merges, branches, tags and a hidden ref."""
    path = tmp_path_factory.mktemp("revopts")
    git("init", "-q", "-b", "main", path)

    def commit(name: str) -> None:
        (path / name).write_text(name + "\n")
        git("add", name, cwd=path)
        git("commit", "-q", "-m", name, cwd=path)

    commit("a")
    commit("b")
    git("checkout", "-q", "-b", "side", cwd=path)
    commit("c")
    commit("d")
    git("checkout", "-q", "main", cwd=path)
    commit("e")
    git("merge", "-q", "--no-edit", "side", cwd=path)
    git("tag", "v1", cwd=path)
    git("checkout", "-q", "-b", "topic", "HEAD~2", cwd=path)
    commit("f")
    git("checkout", "-q", "main", cwd=path)
    git("merge", "-q", "--no-edit", "topic", cwd=path)
    commit("g")
    git("update-ref", "refs/hidden/one", "side", cwd=path)
    git("update-ref", "refs/hidden/two", "topic", cwd=path)
    git("update-ref", "refs/keep/x", "HEAD~1", cwd=path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        "--max-count",
        "-n",
        "--bogus HEAD",
        "--all=x",
        "--max-count 2 HEAD",
        "-n 2 HEAD",
        "-n2 HEAD",
        "-3 HEAD",
        "--skip 1 -2 HEAD",
        "--glob refs/heads/* --count",
        "--exclude refs/heads/side --branches",
        "--min-parents 2 HEAD",
        "--format %H HEAD",
        "--end-of-options HEAD",
        "--count -- HEAD",
        "--not",
        "--parents --children HEAD",
        "--count",
    ],
)
def test_rev_list_grammar(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    same(repo, capfdbinary, "rev-list", *args.split())


@pytest.mark.parametrize(
    "args",
    [
        "--bogus",
        "--oneline --deco",
        "--oneline --max-count 2",
        "--oneline -n",
        "--oneline --parents -4",
        "--oneline --parents --children",
        "--oneline --no-decorate -2",
        "--oneline --decorate=full -2",
        "--oneline --decorate=bogus -2",
        "--format=%s --no-use-mailmap -3",
        "--format=%H -2 --end-of-options HEAD~1",
        "-h",
        "--oneline -h",
    ],
)
def test_log_grammar(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    same(repo, capfdbinary, "log", *args.split())


def test_rev_list_dash_h(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """Git 2.39 prints rev-list's hand-written usage on stderr; gitodb prints that
    text on stdout, as Git 2.55 does and as every gitodb command answers ``-h``."""
    theirs = _git(repo, "rev-list", "-h")
    status, out, err = _ours(repo, capfdbinary, "rev-list", "-h")
    assert (status, out, err) == (129, theirs[2], b"")
    assert out.startswith(b"usage: gitodb rev-list [<options>] <commit>...")


@pytest.mark.parametrize(
    "args",
    [
        "--children HEAD",
        "--children --topo-order --all",
        "--children --date-order HEAD~1..HEAD",
        "--children --reverse --all",
        "--children --first-parent HEAD",
        "--children --all -- c",
        "--children --full-history --all -- d",
        "--children --count --all",
        "--children -3 HEAD",
        "--children --boundary HEAD~2..HEAD",
    ],
)
def test_children(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    out = same(repo, capfdbinary, "rev-list", *args.split())
    assert out


@pytest.mark.parametrize("fmt", ["--oneline", "--pretty=medium", "--abbrev-commit"])
def test_log_children(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], fmt: str) -> None:
    assert b" " in same(repo, capfdbinary, "log", "--children", fmt, "--all")


@pytest.mark.parametrize(
    "args",
    [
        "--exclude-hidden=receive --all",
        "--exclude-hidden=uploadpack --all",
        "--exclude-hidden receive --all",
        "--exclude-hidden=receive --glob=refs/*",
        "--exclude-hidden=receive --all --exclude-hidden=receive --all",
        "--all --exclude-hidden=receive",
        "--exclude-hidden=bogus --all",
        "--exclude-hidden=receive --exclude-hidden=uploadpack --all",
        "HEAD --not --exclude-hidden=receive --all",
    ],
)
def test_exclude_hidden(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    cfg = ["-c", "receive.hideRefs=refs/hidden", "-c", "uploadpack.hideRefs=refs/hidden/one"]
    cfg += ["-c", "uploadpack.hideRefs=!refs/hidden/one", "-c", "transfer.hideRefs=refs/keep/"]
    same(repo, capfdbinary, *cfg, "rev-list", *args.split())


def test_exclude_hidden_refuses_branches(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Git leaves ``--branches`` unknown after ``--exclude-hidden`` (2.55's message)."""
    status, out, err = _ours(
        repo, capfdbinary, "rev-list", "--exclude-hidden=receive", "--branches"
    )
    assert status == 129 and out == b""
    assert err.startswith(
        b"error: options '--exclude-hidden' and '--branches' cannot be used together\n"
        b"usage: gitodb rev-list "
    )
    status, out, err = _ours(repo, capfdbinary, "log", "--exclude-hidden=receive", "--tags")
    assert (status, out) == (128, b"")
    assert err == (
        b"error: options '--exclude-hidden' and '--tags' cannot be used together\n"
        b"fatal: unrecognized argument: --tags\n"
    )


@pytest.fixture(scope="module")
def borrower(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("alt") / "b"
    git("clone", "-q", "--shared", repo, path)
    (path / "z").write_text("z\n")
    git("add", "z", cwd=path)
    git("commit", "-q", "-m", "z", cwd=path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["--alternate-refs"],
        ["HEAD", "--not", "--alternate-refs"],
        ["--objects", "HEAD", "--not", "--alternate-refs"],
        ["-c", "core.alternateRefsPrefixes=refs/tags refs/hidden", "--alternate-refs"],
        ["-c", "core.alternateRefsCommand=f() { echo bogus; }; f", "--alternate-refs"],
        [
            "-c",
            'core.alternateRefsCommand=f() { git --git-dir="$1" rev-parse v1^; }; f',
            "--alternate-refs",
        ],
    ],
)
def test_alternate_refs(
    borrower: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    cfg = [a for i, a in enumerate(args) if a == "-c" or (i and args[i - 1] == "-c")]
    rest = [a for a in args if a not in cfg]
    same(borrower, capfdbinary, *cfg, "rev-list", *rest)


def test_alternate_refs_without_alternates(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """No alternate: nothing to start from, Git's usage."""
    assert not os.path.exists(repo / ".git/objects/info/alternates")
    theirs = _git(repo, "rev-list", "--alternate-refs")
    ours = _ours(repo, capfdbinary, "rev-list", "--alternate-refs")
    assert ours[0] == theirs[0] == 129 and ours[1] == theirs[1] == b""


@pytest.fixture(scope="module")
def ancestry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The history of Git's t6019 (commits A..M, one file each, merges H, J, L)."""
    path = tmp_path_factory.mktemp("ancestry")
    git("init", "-q", "-b", "main", path)
    env = git_env()

    def run(*args: str, when: int | None = None) -> None:
        e = dict(env)
        if when is not None:
            e["GIT_COMMITTER_DATE"] = e["GIT_AUTHOR_DATE"] = f"@{when} +0000"
        subprocess.run(["git", *args], cwd=path, env=e, check=True, capture_output=True)

    def commit(name: str, when: int) -> None:
        (path / f"{name}.t").write_text(name + "\n")
        run("add", f"{name}.t")
        run("commit", "-q", "-m", name, when=when)
        run("tag", name)

    def merge(name: str, other: str, when: int) -> None:
        run("merge", "-q", "--no-edit", "-m", name, other, when=when)
        run("tag", name)

    for i, name in enumerate("ABCDEF", 1):
        commit(name, i)
    run("reset", "-q", "--hard", "E")
    commit("G", 7)
    merge("H", "F", 8)
    commit("I", 9)
    merge("J", "F", 10)
    run("reset", "-q", "--hard", "A")
    commit("K", 11)
    merge("L", "J", 12)
    commit("M", 13)
    return path


@pytest.mark.parametrize(
    "args",
    [
        "--ancestry-path D..M",
        "--ancestry-path=F D..M",
        "--ancestry-path=G D..M",
        "--ancestry-path=H D..M",
        "--ancestry-path=K D..M",
        "--ancestry-path=K --ancestry-path=F D..M",
        "--ancestry-path --ancestry-path=K D..M",
        "--ancestry-path --parents D..M",
        "--ancestry-path --topo-order --children D..M",
        "--ancestry-path --boundary D..M",
        "--ancestry-path F...I",
        "--ancestry-path D..M -- M.t",
        "--ancestry-path D..M -- F.t",
        "--ancestry-path --parents D..M -- F.t",
        "--ancestry-path --sparse D..M -- F.t",
        "--full-history D..M -- F.t",
        "--full-history --parents ^K M -- F.t",
        "--ancestry-path M",
    ],
)
def test_ancestry_path(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    same(ancestry, capfdbinary, "rev-list", *args.split())


def test_ancestry_path_bad_commit(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Git 2.55's messages (2.39 says ``ancestry-path argument``, without dashes)."""
    status, out, err = _ours(ancestry, capfdbinary, "rev-list", "--ancestry-path=nope", "D..M")
    assert (status, out) == (128, b"")
    assert err == b"error: could not get commit for --ancestry-path argument nope\n"
    tree = git("rev-parse", "M^{tree}", cwd=ancestry).strip()
    status, out, err = _ours(ancestry, capfdbinary, "rev-list", "--ancestry-path=M^{tree}", "M")
    assert (status, out) == (128, b"")
    assert err == (
        b"error: object " + tree + b" is a tree, not a commit\n"
        b"error: could not get commit for --ancestry-path argument M^{tree}\n"
    )


@pytest.mark.parametrize(
    "pattern", ["refs/hidden", "^refs/hidden", "refs/heads", "^refs/namespaces"]
)
def test_exclude_hidden_namespace(
    repo: Path,
    capfdbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    pattern: str,
) -> None:
    """Under ``GIT_NAMESPACE`` patterns match the name inside the namespace (a ref
    outside it matches none), ``^`` patterns the full name."""
    git("update-ref", "refs/namespaces/ns/refs/heads/x", "side", cwd=repo)
    args = ["-c", f"transfer.hideRefs={pattern}", "rev-list", "--exclude-hidden=receive", "--all"]
    env = {**git_env(), "GIT_NAMESPACE": "ns"}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=env, check=True)
    monkeypatch.setenv("GIT_NAMESPACE", "ns")
    assert _ours(repo, capfdbinary, *args) == (0, proc.stdout, b"")


@pytest.mark.parametrize(
    "args",
    [
        "--simplify-merges M -- F.t",
        "--simplify-merges --parents M -- F.t",
        "--simplify-merges --parents D..M -- G.t",
        "--simplify-merges --parents M -- K.t F.t",
        "--simplify-merges --parents M -- C.t",
        "--simplify-merges M",
        "--simplify-merges --date-order --parents M -- F.t",
        "--simplify-merges --author-date-order --parents M -- I.t",
        "--simplify-merges --ancestry-path --parents D..M -- F.t",
        "--simplify-merges --first-parent --parents M -- F.t",
        "--simplify-merges --children M -- F.t",
        "--simplify-merges --reverse --parents M -- E.t G.t",
        "--simplify-merges --sparse --parents M -- F.t",
    ],
)
def test_simplify_merges(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    same(ancestry, capfdbinary, "rev-list", *args.split())


@pytest.fixture(scope="module")
def pulls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The history of t6012's --show-pulls part (merges that took one side, a
    merge with ``-Xtheirs``)."""
    path = tmp_path_factory.mktemp("pulls")
    script = """
    git init -q -b topic . &&
    c() { echo "$1" >"$2" && git add "$2" && git commit -q -m "$1" && git tag "$1"; } &&
    c base file && c A file &&
    git switch -q -c branchB base && c B file && git switch -q topic &&
    { git merge -q -m M B >/dev/null 2>&1 || true; } &&
    printf 'A\\nB\\n' >file && git add file && git commit -q -m M && git tag M &&
    c C other &&
    git switch -q -c branchX base && c X file &&
    git switch -q -c branchR M && git merge -q -m R -Xtheirs X && git tag R &&
    git switch -q topic && git merge -q -m N R && git tag N &&
    git switch -q -c branchY M && c Y y &&
    git switch -q -c branchZ C && c Z z &&
    git switch -q topic && git merge -q -m O Z && git tag O &&
    git merge -q -m P Y && git tag P
    """
    env = {**git_env(), "GIT_MERGE_AUTOEDIT": "no"}
    subprocess.run(["sh", "-c", script], cwd=path, env=env, check=True, capture_output=True)
    return path


@pytest.mark.parametrize(
    "args",
    [
        "--simplify-merges --parents HEAD -- file",
        "--simplify-merges --topo-order --parents HEAD -- file",
        "--simplify-merges --ancestry-path --parents A..HEAD -- file",
        "--full-history --topo-order --parents HEAD -- file",
        "--ancestry-path --topo-order --parents A..HEAD -- file",
        "--simplify-merges --parents HEAD -- other file",
    ],
)
def test_simplify_merges_pulls(
    pulls: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    assert same(pulls, capfdbinary, "rev-list", *args.split())


@pytest.mark.parametrize(
    "args",
    [
        "--simplify-by-decoration M",
        "--simplify-by-decoration --parents --all",
        "--simplify-by-decoration --parents D..M",
        "--simplify-by-decoration --parents M -- F.t",
        "--simplify-by-decoration --date-order --parents --all",
    ],
)
def test_simplify_by_decoration(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    git("branch", "-f", "on-h", "H", cwd=ancestry)
    git("tag", "-f", "-a", "-m", "annotated", "on-g", "G", cwd=ancestry)
    assert same(ancestry, capfdbinary, "rev-list", *args.split())


def test_log_simplify_by_decoration(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert same(ancestry, capfdbinary, "log", "--simplify-by-decoration", "--oneline", "--all")


def test_all_takes_other_worktrees_heads(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """``--all`` adds the HEAD of every other worktree (a detached one too)."""
    main = tmp_path / "main"
    git("init", "-q", "-b", "main", main)
    for name in ("a", "b"):
        (main / name).write_text(name)
        git("add", name, cwd=main)
        git("commit", "-q", "-m", name, cwd=main)
    git("worktree", "add", "-q", "--detach", tmp_path / "wt", "HEAD~1", cwd=main)
    (tmp_path / "wt" / "c").write_text("c")
    git("add", "c", cwd=tmp_path / "wt")
    git("commit", "-q", "-m", "c", cwd=tmp_path / "wt")
    for where in (main, tmp_path / "wt"):
        out = same(where, capfdbinary, "rev-list", "--all")
        assert len(out.split()) == 3
        same(where, capfdbinary, "rev-list", "--exclude=worktrees/*", "--all")


def test_log_subject_lines_end_at_lf_only(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A lone CR stays inside its line (Git splits messages at LF only); the
    placeholders that need no commit (``%x00``, ``%n``, ``%%``) next to others."""
    git("init", "-q", tmp_path)
    for message in ("sub\rject line\n\nbody\rx\n", "\n\n  two\n lines \n\n\nbody", "a\r\n\r\nb"):
        git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message, cwd=tmp_path)
    for fmt in ("[%s][%b]", "%H%x00%s%x0a%%%n%-s", "%s%n%+b%x00", "%f"):
        assert same(tmp_path, capfdbinary, "log", f"--format={fmt}")


@pytest.mark.parametrize(
    "args",
    [
        "--left-right --oneline F...I",
        "--left-right F...I",
        "--left-right --format=%s F...I",
        "--left-right --left-only --oneline I...K",
        "--left-right --parents --abbrev-commit F...I",
    ],
)
def test_log_left_right(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    assert same(ancestry, capfdbinary, "log", *args.split())


@pytest.mark.parametrize("command", ["rev-list", "log"])
def test_graph_once_refused(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], command: str
) -> None:
    # refused by name until gitodb.history.graphdraw (tests/test_graph.py)
    assert same(ancestry, capfdbinary, command, "--graph", "--left-right", "F...I")


@pytest.fixture(scope="module")
def shallow(ancestry: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shallow") / "s"
    git("clone", "-q", "--no-local", "--depth", "2", "-b", "main", ancestry, path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        "rev-list --all",
        "rev-list --parents --all",
        "rev-list --objects --all",
        "rev-list --topo-order --parents --all",
        "log --format=%H%x20%P",
        "log --oneline --parents",
    ],
)
def test_shallow_history_ends_at_the_shallow_commits(
    shallow: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    assert (shallow / ".git" / "shallow").exists()
    assert same(shallow, capfdbinary, *args.split())


def test_shallow_file_option(
    shallow: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--shallow-file ""`` (what fetch-pack passes when unshallowing): no shallow
    commits; the walk then meets the missing parents."""
    monkeypatch.setenv("GIT_SHALLOW_FILE", "unset again after the test")  # the CLI sets it
    status, out, _err = _ours(shallow, capfdbinary, "--shallow-file", "", "rev-list", "--all")
    theirs = _git(shallow, "--shallow-file", "", "rev-list", "--all")
    assert (status, out) == (theirs[0], theirs[1]) and status == 128
    other = shallow.parent / "other-shallow"
    other.write_bytes(git("rev-parse", "HEAD", cwd=shallow))
    status, out, err = _ours(shallow, capfdbinary, "--shallow-file", str(other), "rev-list", "HEAD")
    assert (status, out, err) == (0, git("rev-parse", "HEAD", cwd=shallow), b"")


def test_grafts(ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """info/grafts gives commits other parents (and Git 2.55's deprecation hint)."""
    h, k = git("rev-parse", "H", "K", cwd=ancestry).split()
    grafts = ancestry / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_bytes(b"# comment\n" + h + b" " + k + b"\n")
    try:
        for args in ("--parents M", "--topo-order --parents --all", "--ancestry-path D..M"):
            theirs = _git(ancestry, "rev-list", *args.split())
            ours = _ours(ancestry, capfdbinary, "rev-list", *args.split())
            assert ours[:2] == theirs[:2], args
            assert ours[2].startswith(b"hint: Support for <GIT_DIR>/info/grafts is deprecated\n")
        ours = _ours(
            ancestry,
            capfdbinary,
            "-c",
            "advice.graftFileDeprecated=false",
            "log",
            "--format=%H %P",
            "M",
        )
        assert ours == (0, _git(ancestry, "log", "--format=%H %P", "M")[1], b"")
    finally:
        grafts.unlink()


@pytest.mark.parametrize(
    "args",
    [
        "--pretty=raw -3 M",
        "--pretty -3 M",
        "--pretty=short --parents M",
        "--pretty=fuller -2 M",
        "--pretty=full -2 M",
        "--pretty=med -2 M",
        "--pretty=bogus M",
    ],
)
def test_rev_list_builtin_pretty(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    same(ancestry, capfdbinary, "rev-list", *args.split())


@pytest.mark.parametrize(
    "args", ["--bisect", "--bisect-all --bisect", "--bisect --count", "--bisect-vars --bisect"]
)
def test_bisect_starts_from_the_bisection_refs(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    git("update-ref", "refs/bisect/bad", "M", cwd=ancestry)
    git("update-ref", "refs/bisect/good-1", "D", cwd=ancestry)
    git("update-ref", "refs/bisect/good-2", "K", cwd=ancestry)
    try:
        assert same(ancestry, capfdbinary, "rev-list", *args.split())
    finally:
        for ref in ("bad", "good-1", "good-2"):
            git("update-ref", "-d", f"refs/bisect/{ref}", cwd=ancestry)


@pytest.mark.parametrize(
    "args",
    [
        "--in-commit-order --objects HEAD",
        "--in-commit-order --objects D..M",
        "--in-commit-order --objects --all",
        "--in-commit-order --objects --no-object-names M^{tree} M",
        "--in-commit-order --objects --count M",
        "--in-commit-order --objects M^{tree}",
        "--in-commit-order --objects --boundary D..M",
        "--in-commit-order --objects --topo-order --all ^D",
    ],
)
def test_in_commit_order(
    ancestry: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    git("tag", "-f", "-a", "-m", "annotated", "on-g", "G", cwd=ancestry)
    assert same(ancestry, capfdbinary, "rev-list", *args.split())
