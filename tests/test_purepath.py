"""``gitodb.purepath`` spells paths as ``pathlib`` does (its reason to exist: the
repository-opening code works without importing ``pathlib``)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from hypothesis import given
from hypothesis import strategies as st

from gitodb.purepath import absolute, pure

_PARTS = st.lists(st.sampled_from(["", ".", "..", "a", "b.c", ".git", " x"]), max_size=6)


@given(st.sampled_from(["", "/", "//", "///"]), _PARTS, st.booleans())
def test_pure_is_purepaths_spelling(root: str, parts: list[str], trailing: bool) -> None:
    path = root + "/".join(parts) + ("/" if trailing else "")
    assert pure(path) == str(PurePath(path))


@given(_PARTS)
def test_absolute_is_paths_absolute(parts: list[str]) -> None:
    path = "/".join(parts)
    assert absolute(path) == str(Path(path).absolute())
    inside = os.getcwd() + "/" + path
    assert absolute(inside) == str(Path(inside).absolute())
