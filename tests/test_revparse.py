"""Name resolution compared with ``git rev-parse`` on a repository git builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitodb.errors import AmbiguousObjectNameError, BadRevisionError
from gitodb.repo import Repository
from gitodb.repo.revparse import MissingPathError, resolve, resolve_full
from test_odb_support import DATA, add_ambiguous_pair, git, make_repo

pytestmark = pytest.mark.e2e

NAMES = [
    "HEAD",
    "@",
    "main",
    "heads/main",
    "refs/heads/main",
    "side",
    "v1",
    "v1-outer",
    "tags/v1",
    "tree-tag",
    "blob-tag",
    "light",
    "v1^{}",
    "v1-outer^{}",
    "v1^{commit}",
    "v1^{tree}",
    "v1-outer^{tag}",
    "v1^{object}",
    "HEAD^{tree}",
    "HEAD^{commit}",
    "HEAD~2",
    "HEAD^",
    "HEAD^0",
    "HEAD~3^2",
    "HEAD~3^1",
    "HEAD~1^1",
    "HEAD:",
    "HEAD:dir",
    "HEAD:dir/",
    "HEAD:dir/b.txt",
    "HEAD:dir/sub/c.txt",
    "HEAD~3:a.txt",
    "v1:a.txt",
    "HEAD:link",
    "side~1",
    "HEAD^{tree}:dir",
    "main~0",
    "both",
]
BAD = [
    "nope",
    "HEAD:nope",
    "HEAD:a.txt/x",
    "HEAD~99",
    "HEAD^3",
    "v1^{blob}",
    "tree-tag^{commit}",
    "HEAD^{bogus}",
    "refs/heads/nope",
    "",
    "a..b",
]


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def work(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = make_repo(tmp_path_factory.mktemp("rev") / "w", request.param)
    # A tag and a branch named alike: refs/tags wins in Git's search order.
    git(w, "branch", "both", "HEAD~1")
    git(w, "tag", "both", "HEAD~2")
    return w


def rev_parse(work: Path, name: str) -> str | None:
    p = git(work, "rev-parse", "--verify", "-q", name, check=False)
    return p.stdout.decode().strip() if p.returncode == 0 else None


def test_names_match_git(work: Path) -> None:
    repo = Repository(work)
    out = git(work, "cat-file", "--batch-all-objects", "--batch-check").stdout.decode()
    oids = [line.split()[0] for line in out.splitlines()]
    names = NAMES + oids + [o[:8] for o in oids] + [o[:5].upper() for o in oids[:3]]
    for name in names:
        expected = rev_parse(work, name)
        assert expected is not None, name
        assert resolve(repo, name).hex() == expected, name


def test_bad_names(work: Path) -> None:
    repo = Repository(work)
    for name in BAD:
        assert rev_parse(work, name) is None, name
        with pytest.raises(BadRevisionError):
            resolve(repo, name)
    with pytest.raises(MissingPathError, match="path 'nope' does not exist in 'HEAD'"):
        resolve(repo, "HEAD:nope")


def test_full_hex_of_missing_object_resolves(work: Path) -> None:
    repo = Repository(work)
    missing = "1" * repo.object_format.hexsz
    assert resolve(repo, missing) == bytes.fromhex(missing)


def test_ambiguous_prefix(work: Path) -> None:
    repo = Repository(work)
    prefix = add_ambiguous_pair(work, repo.object_format)
    assert rev_parse(work, prefix) is None
    with pytest.raises(AmbiguousObjectNameError, match=f"short object ID {prefix} is ambiguous"):
        resolve(repo, prefix)
    # One more digit makes it unique again, as for git.
    full = [o for o in repo.odb.find_prefix(prefix)]
    assert len(full) == 2
    for oid in full:
        h = oid.hex()
        n = 5
        while sum(o.hex().startswith(h[:n]) for o in full) > 1:
            n += 1
        assert resolve(repo, h[:n]) == oid == bytes.fromhex(rev_parse(work, h[:n]) or "")


def test_path_mode_reported(work: Path) -> None:
    repo = Repository(work)
    assert resolve_full(repo, "HEAD:run.sh").mode == 0o100755
    assert resolve_full(repo, "HEAD:link").mode == 0o120000
    assert resolve_full(repo, "HEAD:dir").mode == 0o040000


def test_fixture_refs() -> None:
    """packs-mixed: a loose ref overrides packed-refs; tags of tags and trees peel."""
    repo = Repository(DATA / "packs-mixed" / "repo")
    for line in (DATA / "packs-mixed" / "expected" / "show-ref.txt").read_text().splitlines():
        oid, name = line.split()
        if name.endswith("^{}"):
            assert resolve(repo, name[:-3] + "^{}").hex() == oid
        else:
            assert resolve(repo, name).hex() == oid
