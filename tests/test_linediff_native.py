"""The native line diff (``_native/linediff.c``) against its reference, the pure
Python ``gitodb.history.linediff.diff_lines_py``, on random inputs and on the edge
cases each stage has (empty sides, no final newline, all lines equal, long common
ends, many identical lines, CRLF, the search's shortcuts), and against Git."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import stress_scale
from gitodb.history import linediff, patch
from gitodb.history.linediff import Edit, diff_lines_py, split_lines
from gitodb.history.patch import unified
from helpers import git_env

native = pytest.importorskip("gitodb._native")  # a pure build has only the reference


def both(a: list[bytes], b: list[bytes], heuristic: bool = True, minimal: bool = False) -> None:
    """Assert that C and Python give the same script (and return it)."""
    want = diff_lines_py(a, b, indent_heuristic=heuristic, minimal=minimal)
    got = [Edit._make(t) for t in native.diff_lines(a, b, heuristic, minimal)]
    assert got == want


_POOL = [
    b"\n",
    b"  \n",
    b"\r\n",
    b"}\n",
    b"{\n",
    b"\t}\n",
    b"    return 0;\n",
    b"int f(void)\n",
    b"\tif (a) {\n",
    b"\t\tb();\n",
    b"        c\n",
    b"x\n",
    b"y\n",
    b"z\r\n",
    b"\x0bw\n",
    b"\x0c\n",
    b" " * 250 + b"deep\n",
    b"\t" * 30 + b"tabs\n",
    b"x",
    b"",
]


@st.composite
def line_pair(draw: st.DrawFn) -> tuple[list[bytes], list[bytes]]:
    pool = draw(st.lists(st.sampled_from(_POOL), min_size=1, max_size=8, unique=True))
    line = st.sampled_from(pool)
    a = draw(st.lists(line, max_size=120))
    b = list(a)
    for _ in range(draw(st.integers(0, 8))):
        pos = draw(st.integers(0, len(b)))
        if draw(st.booleans()):
            b[pos:pos] = draw(st.lists(line, min_size=1, max_size=10))
        else:
            del b[pos : pos + draw(st.integers(1, 10))]
    if draw(st.booleans()):  # a side made fresh, sharing only the pool
        b = draw(st.lists(line, max_size=120))
    return a, b


@settings(
    max_examples=400 * max(1, stress_scale()),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(pair=line_pair(), heuristic=st.booleans(), minimal=st.booleans())
def test_native_matches_python_on_random_lines(
    pair: tuple[list[bytes], list[bytes]], heuristic: bool, minimal: bool
) -> None:
    both(*pair, heuristic=heuristic, minimal=minimal)


@settings(max_examples=150 * max(1, stress_scale()), deadline=None)
@given(old=st.binary(max_size=400), new=st.binary(max_size=400))
def test_native_matches_python_on_random_bytes(old: bytes, new: bytes) -> None:
    """Arbitrary bytes cut at ``\\n`` (CR, NUL, no final newline...)."""
    both(split_lines(old), split_lines(new))


def test_edge_cases() -> None:
    same = [b"x\n"] * 500
    cases: list[tuple[list[bytes], list[bytes]]] = [
        ([], []),
        ([], [b"a\n"]),
        ([b"a\n"], []),
        ([b"a"], [b"a\n"]),  # no trailing newline on one side
        ([b"a\n", b"b"], [b"a\n", b"b\n"]),
        (same, same),  # all lines equal
        (same, same[:-1]),
        (same, same + [b"y\n"]),
        ([b"\r\n", b"a\r\n"], [b"\n", b"a\n"]),  # CRLF differs from LF
        (
            [b"p\n"] * 5000 + [b"a\n"] + [b"s\n"] * 5000,
            [b"p\n"] * 5000 + [b"b\n"] + [b"s\n"] * 5000,
        ),
        ([b"p\n"] * 3000, [b"q\n"] * 3000),  # nothing in common
    ]
    for a, b in cases:
        for heuristic in (True, False):
            for minimal in (True, False):
                both(a, b, heuristic, minimal)


def test_shortcuts_and_common_lines() -> None:
    """Big inputs from few distinct lines take the snake heuristic and the cost
    limit; lines frequent on the other side go through the cleanup scan."""
    rnd = random.Random(11)
    for trial in range(6 * max(1, stress_scale())):
        pool = [
            bytes(rnd.choice(b" \tab{}") for _ in range(rnd.randint(0, 3))) + b"\n"
            for _ in range(rnd.randint(2, 30))
        ]
        a = [rnd.choice(pool) for _ in range(rnd.randint(1000, 4000))]
        b = list(a)
        for _ in range(rnd.randint(1, 200)):
            pos = rnd.randint(0, len(b))
            if rnd.random() < 0.5:
                b[pos:pos] = [rnd.choice(pool) for _ in range(rnd.randint(1, 30))]
            else:
                del b[pos : pos + rnd.randint(1, 30)]
        if trial % 2:
            b = [rnd.choice(pool) for _ in range(rnd.randint(1000, 4000))]
        both(a, b, heuristic=bool(trial % 3), minimal=trial % 4 == 0)


def test_unique_lines_with_moves() -> None:
    """Mostly unique lines, blocks moved about: the usual source diff."""
    rnd = random.Random(3)
    a = [b"line %d\n" % i for i in range(3000)]
    b = list(a)
    for _ in range(40):
        i = rnd.randrange(len(b))
        block = b[i : i + rnd.randint(1, 50)]
        del b[i : i + len(block)]
        j = rnd.randrange(len(b) + 1)
        b[j:j] = block
    both(a, b)


def test_lines_must_be_bytes() -> None:
    with pytest.raises(TypeError):
        native.diff_lines([b"a\n", "b\n"], [b"a\n"], True, False)


def test_a_big_diff_beside_another_thread() -> None:
    """A big diff (run without the GIL) while another Python thread runs gives
    the reference's result."""
    a = [b"%d\n" % (i % 97) for i in range(20000)]
    b = [b"%d\n" % (i % 89) for i in range(20000)]
    stop = threading.Event()
    ticks = [0]

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=spin)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        t.start()
        got = native.diff_lines(a, b, True, False)
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert [Edit._make(e) for e in got] == diff_lines_py(a, b)


def test_switch_turns_the_native_diff_off(tmp_path: Path) -> None:
    code = "from gitodb.history import linediff; print(linediff.native_enabled())"
    for value, want in (("1", b"False\n"), ("", b"True\n")):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "GITODB_PURE_DIFF": value},
            capture_output=True,
            check=True,
        ).stdout
        assert out == want
    assert linediff.native_enabled() == (os.environ.get("GITODB_PURE_DIFF", "") != "1")


def test_native_unified_matches_git(tmp_path: Path) -> None:
    """The native diff's hunks against ``git diff --no-index``."""
    rnd = random.Random(7)
    pool = [b"\n", b"}\n", b"\treturn 0;\n", b"int f(void)\n", b"{\n", b"\tx++;\n", b"y\n"]
    for _ in range(8):
        old = b"".join(rnd.choice(pool) for _ in range(rnd.randint(0, 400)))
        lines = split_lines(old)
        for _ in range(rnd.randint(1, 10)):
            pos = rnd.randint(0, len(lines))
            lines[pos:pos] = [rnd.choice(pool) for _ in range(rnd.randint(1, 8))]
        new = b"".join(lines)
        (tmp_path / "a").write_bytes(old)
        (tmp_path / "b").write_bytes(new)
        out = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", "a", "b"],
            cwd=tmp_path,
            capture_output=True,
            env=git_env(),
            check=False,
        ).stdout
        at = out.find(b"\n@@")
        assert unified(old, new) == (out[at + 1 :] if at >= 0 else b"")


def hunks_py(old: bytes, new: bytes, context: int, inter_hunk: int, heuristic: bool) -> bytes:
    a, b = split_lines(old), split_lines(new)
    edits = diff_lines_py(a, b, indent_heuristic=heuristic)
    return b"".join(patch.hunks(a, b, edits, context, inter_hunk))


@st.composite
def file_pair(draw: st.DrawFn) -> tuple[bytes, bytes]:
    a, b = draw(line_pair())
    extra = [
        b"int main(void)\n",
        b"_start:\n",
        b"$x = 1;\n",
        b"f" * 100 + b"  \t\n",
        b"a" * 79 + "\u00e9".encode() + b"x\n",  # the 80-byte cut splits a character
        b"f\xc3(x\n",
        b"g\xef\xbf\xbe \n",
        b"h \xf0\x9f\x98\x80\xed\xa0\x80\n",
        b"k\xf4\x90\x80\x80\n",
    ]
    for side in (a, b):
        for _ in range(draw(st.integers(0, 3))):
            side.insert(draw(st.integers(0, len(side))), draw(st.sampled_from(extra)))
    return b"".join(a), b"".join(b)


@settings(
    max_examples=300 * max(1, stress_scale()),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    pair=file_pair(),
    context=st.sampled_from([0, 1, 3, 10]),
    inter_hunk=st.sampled_from([0, 0, 2]),
    heuristic=st.booleans(),
)
def test_native_hunks_match_python(
    pair: tuple[bytes, bytes], context: int, inter_hunk: int, heuristic: bool
) -> None:
    """The whole hunk text (lines cut, diffed and written in C) against the
    Python path: split_lines, diff_lines_py and patch.hunks."""
    old, new = pair
    got = native.diff_buffers(old, new, heuristic, False, context, inter_hunk)
    assert got == hunks_py(old, new, context, inter_hunk, heuristic)
    edits = [Edit._make(e) for e in native.diff_buffers(old, new, heuristic, False)]
    assert edits == diff_lines_py(split_lines(old), split_lines(new), indent_heuristic=heuristic)


def test_native_hunks_edge_cases() -> None:
    cases = [
        (b"", b""),
        (b"", b"a"),
        (b"a", b""),
        (b"a", b"a\n"),
        (b"a\nb", b"a\nc"),
        (b"\n\n\n", b"\n\n"),
        (b"x\r\ny\r\n", b"x\ny\n"),
        (b"same\n" * 2000, b"same\n" * 2000),
        (b"p\n" * 40000 + b"a\n" + b"s\n" * 40000, b"p\n" * 40000 + b"b\n" + b"s\n" * 40000),
    ]
    for old, new in cases:
        for context in (0, 3):
            assert native.diff_buffers(old, new, True, False, context, 0) == hunks_py(
                old, new, context, 0, True
            )


def test_diff_buffers_wants_bytes() -> None:
    with pytest.raises(TypeError):
        native.diff_buffers(bytearray(b"a\n"), b"b\n", True, False)
    with pytest.raises(ValueError):
        native.diff_buffers(b"a\n", b"b\n", True, False, 3, -1)
