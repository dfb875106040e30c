"""The package's own surface: top-level entry points and metadata."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gitodb
from helpers import git


def test_top_level_entry_points(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    (tmp_path / "sub").mkdir()
    assert gitodb.open(tmp_path).git_dir == (tmp_path / ".git").absolute()
    assert gitodb.discover(tmp_path / "sub").git_dir == (tmp_path / ".git").absolute()
    assert isinstance(gitodb.open(tmp_path), gitodb.Repository)
    assert issubclass(gitodb.GitodbError, Exception)


def test_unknown_attribute_is_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gitodb.nope  # noqa: B018


def test_import_stays_cheap() -> None:
    # The CLI imports gitodb for every command: the re-exports must stay lazy.
    code = "import sys, gitodb; print('gitodb.repo' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_public_name_resolves() -> None:
    for name in gitodb.__all__:
        assert getattr(gitodb, name) is not None, name
    assert gitodb.ObjectId is __import__("gitodb.objects.oid", fromlist=["x"]).ObjectId
