"""The native path of for-each-ref (default format, sort by name...) prints git's bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitodb.repo import Repository
from gitodb.repo.refformat import DEFAULT_FORMAT, Formatter
from gitodb.repo.refformat.native import available as native_available
from helpers import git, run_cli


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plain") / "r"
    git("init", "-q", str(path))
    (path / "f").write_text("x\n")
    git("-C", str(path), "add", "f")
    git("-C", str(path), "commit", "-q", "-m", "one")
    tree = git("-C", str(path), "rev-parse", "HEAD^{tree}").decode().strip()
    blob = git("-C", str(path), "rev-parse", "HEAD:f").decode().strip()
    git("-C", str(path), "tag", "-a", "-m", "annotated", "v1")
    # names that differ only in case (ties under --ignore-case), refs to every type
    for name in ("Topic", "topic", "TOPIC", "a/b", "a-b", "z"):
        git("-C", str(path), "branch", name)
    git("-C", str(path), "update-ref", "refs/misc/tree", tree)
    git("-C", str(path), "update-ref", "refs/misc/blob", blob)
    git("-C", str(path), "pack-refs", "--all")
    git("-C", str(path), "branch", "loose-after-pack")  # loose and packed together
    return path


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--sort=-refname"],
        ["--ignore-case"],
        ["--ignore-case", "--sort=-refname"],
        ["--format=%(refname)%00%(objecttype) %(objectname)"],
        ["--format=[%(objecttype)]", "--sort=refname"],
        ["--format=%(refname)", "--count=3", "--sort=-refname"],
        ["--format=%%%(refname)%x09", "refs/heads/"],
    ],
    ids=" ".join,
)
def test_plain_formats_match_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    expected = git("-C", str(repo), "for-each-ref", *args)
    capfdbinary.readouterr()
    assert run_cli(repo, "for-each-ref", *args) == 0
    assert capfdbinary.readouterr().out == expected


@pytest.mark.parametrize(
    ("fmt", "native"),
    [
        (DEFAULT_FORMAT, True),
        ("%(refname)", True),
        ("%(objectsize) %(*objectname) %(*objecttype) %(*objectsize)", True),
        ("%(refname:short)", False),
        ("%(*refname)", False),
        ("%(objectname:short)", False),
        ("%(objectsize:disk)", False),
        ("%(subject)", False),
        ("%(if)%(symref)%(then)x%(end)", False),
    ],
)
def test_which_formats_take_the_native_path(repo: Path, fmt: str, native: bool) -> None:
    if not native_available():
        pytest.skip("built without the native core")
    formatter = Formatter(Repository(repo), fmt)
    assert (formatter.native_plan is not None) is native
    assert Formatter(Repository(repo), fmt, quote_style="shell").native_plan is None
