"""``gitodb.lazyre``: a pattern compiled on first use matches as ``re.compile``'s does,
and defining one imports nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from gitodb.lazyre import compiled, lazy

PATTERNS = [r"[a-z][a-z0-9-]*", r"(?s)Error (-?[0-9]+) (.*)", r"(.*)@\{([^}]*)\}"]


@given(st.sampled_from(PATTERNS), st.text(alphabet="aZ9-@{}.\n Error", max_size=20))
def test_a_lazy_pattern_matches_as_the_compiled_one(pattern: str, text: str) -> None:
    lazy_pattern, real = lazy(pattern), re.compile(pattern)
    for method in ("match", "fullmatch", "search"):
        got, want = getattr(lazy_pattern, method)(text), getattr(real, method)(text)
        assert (got and got.groups()) == (want and want.groups())
    assert lazy_pattern.findall(text) == real.findall(text)
    assert compiled(lazy_pattern) is real  # re's own cache: the same compiled pattern
    assert compiled(real) is real


def test_bytes_patterns() -> None:
    hexdigits = lazy(rb"[0-9a-fA-F]+")
    assert hexdigits.fullmatch(b"00aF") and not hexdigits.fullmatch(b"00g")


def test_defining_a_pattern_imports_no_re() -> None:
    code = "import sys; from gitodb.lazyre import lazy; p = lazy(r'a+'); print('re' in sys.modules)"
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False"]
