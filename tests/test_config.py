"""Config parsing against ``git config``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import ConfigError
from gitodb.repo.config import Config, parse_int
from helpers import git

SAMPLE = r"""
# comment
[core]
	repositoryformatversion = 1
	bare = true ; trailing comment
	bigFileThreshold = 32m
	emptyvalue =
	flag
[Remote "Origin"]
	url = "quoted # not a comment"
	fetch = +refs/heads/*:refs/remotes/Origin/*
	fetch = +refs/tags/*:refs/tags/*
[pack] compression = 3
[branch.Main]
	remote = origin
[weird]
	escaped = a\tb\"c\\d
"""
SAMPLE += '\tspaced = "  keep  "  spaces inside  \n'  # trailing blanks are dropped


def test_values_match_git_config(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(SAMPLE)
    cfg = Config()
    cfg.read_file(path)
    for line in git("config", "--file", path, "--list", "-z").split(b"\0"):
        if not line:
            continue
        key, _, value = line.decode().partition("\n")
        assert value in cfg.get_all(key), key
    assert cfg.get_all("remote.Origin.fetch") == [
        "+refs/heads/*:refs/remotes/Origin/*",
        "+refs/tags/*:refs/tags/*",
    ]
    assert cfg.get_int("core.bigfilethreshold", 0) == 32 * 1024 * 1024
    assert cfg.get_bool("core.flag") is True and cfg.get_bool("core.bare") is True
    assert cfg.get_int("pack.compression", -1) == 3
    assert cfg.get("branch.main.remote") == "origin"


def test_overrides_win() -> None:
    cfg = Config()
    cfg.add("core.compression", "1")
    cfg.apply_overrides(["core.compression=9", "core.logAllRefUpdates"])
    assert cfg.get_int("core.compression", -1) == 9
    assert cfg.get_bool("core.logallrefupdates") is True


@pytest.mark.parametrize("text, value", [("0", 0), ("7k", 7168), ("1G", 2**30), ("-3", -3)])
def test_parse_int_units(text: str, value: int) -> None:
    assert parse_int(text) == value


def test_bad_values_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        parse_int("12q")
    path = tmp_path / "config"
    path.write_text("[core\nx = 1\n")
    with pytest.raises(ConfigError):
        Config().read_file(path)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\rab=.x/é\0", max_size=24))
def test_plain_values_are_unquoted_as_by_the_full_rules(raw: str) -> None:
    """A value with no quote, escape or comment takes a short path: the same value
    as the character loop gives it (a comment after it sends it through the loop)."""
    from gitodb.repo.config import _unquote_value

    assert _unquote_value(raw, "f", 1) == _unquote_value(raw + "#", "f", 1)
