"""Commands moved onto gitodb.cli.options: their arguments parse as Git parses them.

Each case runs ``git`` (on PATH) and ``gitodb`` with the same arguments in the same
repository.  ``same`` cases must match in exit status, stdout and stderr (usage lines
naming ``gitodb``); ``first`` cases print a usage text whose option list differs
between the git on PATH and the newer Git gitodb follows, so only the status and the
first line of stderr are compared.  With Git 2.55 at hand (../shared) the ``first``
cases are compared with it too; ``new`` cases (options the git on PATH does not
have) are compared only with it, the same way, and skipped without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import as_gitodb, git, git_env

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("conv") / "r"
    git("init", "-q", "-b", "main", path)
    for i in range(3):
        (path / "a").write_text(f"a{i}\n")
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", f"c{i}", cwd=path)
    git("tag", "-a", "-m", "t", "v1", cwd=path)
    git("branch", "side", "HEAD~1", cwd=path)
    git("repack", "-q", "-a", "-d", cwd=path)
    return path


def _run(argv: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    env = git_env()
    env["GIT_PAGER"] = "cat"
    proc = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=env, check=False)
    return proc.returncode, as_gitodb(proc.stdout), as_gitodb(proc.stderr)


def _head(err: bytes) -> bytes:
    """The first line of ``err``, or just ``usage:`` when that is where it starts."""
    line = err.split(b"\n")[0]
    return b"usage:" if line.startswith(b"usage: ") else line


def _both(repo: Path, git_cmd: list[str], args: list[str]) -> tuple[tuple, tuple]:  # type: ignore[type-arg]
    theirs = _run([*git_cmd, *args], repo)
    ours = _run([sys.executable, "-m", "gitodb", *args], repo)
    return theirs, ours


#: command -> [(arguments, "same" | "first")]
CASES: dict[str, list[tuple[str, str]]] = {
    "for-each-ref": [
        ("--count=x", "same"),
        ("--count=-1", "first"),
        ("-s -p", "first"),
        ("-sp", "first"),
        ("--color=bogus", "same"),
        ("--merged", "same"),
        ("--merged HEAD~1", "same"),
        ("--merged=HEAD~1 --format=%(refname)", "same"),
        ("--no-merged=x", "same"),
        ("--no-merged main", "same"),
        ("--contains=x", "same"),
        ("--contains", "same"),
        ("--sort", "same"),
        ("--sort=-refname --no-sort --sort=objectname", "same"),
        ("--bogus", "first"),
        ("-x", "first"),
        ("--points-at=zz", "same"),
        ("--points-at HEAD", "same"),
        ("--no-points-at", "same"),
        ("--format=%(bad)", "same"),
        ("--no-color --format=%(color:red)x", "same"),
        ("--color --format=%(color:red)x", "same"),
        ("--ign --sort=refname", "same"),
        ("--tcl --format=%(refname)", "same"),
        ("--no-tcl -p --format=%(refname)", "same"),
        ("--count 1", "same"),
        ("--end-of-options refs/tags", "same"),
        ("-- refs/tags", "same"),
        ("--format", "same"),
        ("--shell=x", "same"),
        ("--no-count", "same"),
    ],
    "show-ref": [
        ("--hash=x", "same"),
        ("--abbrev=x", "same"),
        ("-s5", "same"),
        ("--hash --abbrev=7", "same"),
        ("-d", "same"),
        ("-dq", "same"),
        ("--verify", "same"),
        ("--heads", "same"),
        ("--branches --tags", "new"),
        ("--no-abbrev", "same"),
        ("--abbrev", "same"),
        ("-q --verify refs/heads/nope", "same"),
        ("-x", "first"),
        ("--bogus", "first"),
        ("--no-exclude-existing", "first"),
        ("--verify -- refs/heads/main", "same"),
        ("--end-of-options main", "same"),
        ("--ver refs/tags/v1", "same"),
        ("--hash=3 --tags", "first"),
        ("--no-tags --tags -s", "first"),
    ],
    "pack-refs": [
        ("x", "first"),
        ("--bogus", "first"),
        ("--no-prune=1", "same"),
        ("--al --no-prune", "same"),
        ("-a", "first"),
        ("--include", "new"),
        ("--exclude=x --no-exclude", "new"),
        ("--auto --no-auto --all", "new"),
    ],
    "reflog": [
        ("-h", "new"),
        ("exists -h", "same"),
        ("show -h", "same"),
        ("exists", "same"),
        ("exists --bogus x", "same"),
        ("exists refs/heads/main", "same"),
        ("exists --end-of-options refs/heads/nope", "same"),
        ("show --bogus", "same"),
        ("--bogus", "same"),
        ("show --format", "same"),
        ("show --format=%H", "same"),
        ("--pretty=%gs main", "same"),
        ("show --end-of-options main", "same"),
        ("delete --bogus", "first"),
        ("expire --bogus", "first"),
        ("expire --expire", "same"),
        ("expire --no-expire", "first"),
        ("drop --all x", "new"),
        ("drop --bogus", "new"),
        ("write a", "new"),
        ("delete", "same"),
        ("list x", "new"),
        ("delete -n --verbose main@{0}", "new"),
        ("delete -nx main@{0}", "new"),
        ("delete --dry --verb main@{0}", "same"),
    ],
    "symbolic-ref": [
        ("", "same"),
        ("HEAD", "same"),
        ("--short HEAD", "same"),
        ("-q --no-recurse HEAD", "same"),
        ("-x", "same"),
        ("--bogus", "same"),
        ("-m", "same"),
        ("-d", "same"),
        ("-qd x y", "same"),
        ("a b c", "same"),
        ("--no-quiet HEAD", "same"),
        ("--sh HEAD", "same"),
        ("--end-of-options HEAD", "same"),
        ("-qs HEAD", "same"),
        ("-q refs/heads/main", "same"),
    ],
    "update-ref": [
        ("", "first"),
        ("-x", "first"),
        ("--bogus", "first"),
        ("-m", "same"),
        ("-d", "first"),
        ("-d refs/heads/nope", "same"),
        ("--stdin x", "first"),
        ("--stdin -d", "first"),
        ("a b c d", "first"),
        ("-dz x", "first"),
        ("--std", "same"),
        ("--no-deref --deref refs/heads/nope2 HEAD~3", "same"),
        ("-0", "new"),
        ("--batch-updates", "new"),
        ("--end-of-options refs/heads/nope3 HEAD~3", "same"),
    ],
    "commit-graph": [
        ("", "first"),
        ("bogus", "first"),
        ("write --bogus", "first"),
        ("verify -x", "first"),
        ("write --split=bad", "same"),
        ("write --reachable --stdin-packs", "same"),
        ("verify --object-dir", "same"),
        ("write --reachable --no-progress", "same"),
        ("verify --no-progress", "same"),
        ("write --split --reachable --changed-paths --no-progress", "same"),
        ("--object-dir .git/objects verify --no-progress", "same"),
        ("write --obj=.git/objects --reach --no-progress", "same"),
        ("write --object-dir=/ --no-progress", "same"),
        ("write x", "first"),
        ("write --no-split", "first"),
    ],
    "show-index": [
        ("--bogus", "first"),
        ("-x", "first"),
        ("--object-format", "same"),
        ("--object-format=bogus", "same"),
        ("--no-object-format=x", "same"),
        ("--obj", "same"),
    ],
}


@pytest.mark.parametrize(
    ("command", "args", "how"),
    [(c, a, h) for c, cases in CASES.items() for a, h in cases],
)
def test_parses_like_git(repo: Path, command: str, args: str, how: str) -> None:
    argv = [command, *args.split()]
    if how == "new":
        if not GIT_255.exists():
            pytest.skip("Git 2.55 (../shared) is not here")
        newer, ours = _both(repo, [str(GIT_255)], argv)
        assert (ours[0], ours[1]) == (newer[0], newer[1])
        assert _head(ours[2]) == _head(newer[2])
        return
    theirs, ours = _both(repo, ["git"], argv)
    if how == "same":
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]
        assert _head(ours[2]) == _head(theirs[2])
        if GIT_255.exists():
            newer, _ = _both(repo, [str(GIT_255)], argv)
            assert (ours[0], _head(ours[2])) == (newer[0], _head(newer[2]))
            usage_at = newer[2].find(b"usage: ")
            assert usage_at < 0 or ours[2].find(b"usage: gitodb ") >= 0


@pytest.mark.parametrize("command", sorted(CASES))
def test_help_lists_every_option_git_lists(repo: Path, command: str) -> None:
    """-h: usage on stdout, status 129, every option Git 2.55 lists (when at hand)."""
    status, out, err = _run([sys.executable, "-m", "gitodb", command, "-h"], repo)
    assert (status, err) == (129, b"") and out.startswith(f"usage: gitodb {command} ".encode())
    if not GIT_255.exists():
        pytest.skip("Git 2.55 (../shared) is not here")
    _status, theirs, _ = _run([str(GIT_255), command, "-h"], repo)
    for line in theirs.split(b"\n"):
        word = line.strip().split(b" ")[0]
        if line.startswith(b"    -") and word:
            name = word.replace(b"[no-]", b"").rstrip(b",").split(b"[=")[0]
            assert name in out, (name, out.decode())
