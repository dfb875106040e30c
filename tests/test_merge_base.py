"""``gitodb merge-base`` against ``git merge-base`` (output and exit status)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle import assert_same
from test_rev_list import build

PAIRS = [
    ["main", "side"],
    ["other", "side"],
    ["main~1", "other"],
    ["side", "side"],
    ["lonely", "main"],
    ["v1", "side~1"],
    ["main", "other", "side"],
    ["other~1", "side~2", "main~3"],
]


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp(request.param) / "r", request.param)


@pytest.mark.parametrize(
    "opts",
    [[], ["--all"], ["-a"], ["--octopus"], ["--octopus", "--all"], ["--independent"]],
    ids=" ".join,
)
def test_bases_match_git(repo: Path, opts: list[str]) -> None:
    for revs in PAIRS:
        assert_same(repo, "merge-base", *opts, *revs)


def test_is_ancestor(repo: Path) -> None:
    for a, b in (
        ["main~2", "main"],
        ["main", "main~2"],
        ["side", "main"],
        ["lonely", "main"],
        ["main", "main"],
        ["other~1", "v1-outer"],
    ):
        assert_same(repo, "merge-base", "--is-ancestor", a, b)


def test_fork_point(repo: Path) -> None:
    assert_same(repo, "merge-base", "--fork-point", "main", "side")
    assert_same(repo, "merge-base", "--fork-point", "side")
    assert_same(repo, "merge-base", "--fork-point", "nope", "side")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["main"],
        ["--is-ancestor", "main"],
        ["--is-ancestor", "a", "b", "c"],
        ["--all", "--is-ancestor", "main", "side"],
        ["--independent", "--all", "main"],
        ["--octopus", "--independent", "main"],
        ["main", "nope"],
        ["main", "main^{tree}"],
        ["--bogus"],
        ["--octopus"],
        ["--independent"],
    ],
)
def test_errors_match_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "merge-base", *args)
