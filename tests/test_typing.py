"""``mypy --strict`` passes on a user's script made of the README's and docs' examples.

The script is assembled anew each run from every Python block of README.md and
docs/*.md (the blocks tests/test_doc_examples.py runs), each block the body of its
own function so that two blocks may reuse a name with another type.  A user who
copies an example into a strictly typed program gets no error from gitodb's types.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_doc_examples import ROOT, blocks, doc_files

#: README blocks that do not type-check yet, by the hash of their text, with why.  A
#: listed block that starts to pass, or another that fails, fails the test.
KNOWN_UNTYPED: dict[str, str] = {}


def block_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def user_script() -> tuple[str, list[tuple[int, str, str]]]:
    """Every doc block as ``def example_<n>() -> None:`` in one module, and where each
    starts: ``(first line, "file:line", block hash)``."""
    parts = ['"""The README\'s and docs\' examples, as a user\'s typed script."""\n']
    starts: list[tuple[int, str, str]] = []
    for path in doc_files():
        for line, source in blocks(path):
            name = f"{path.relative_to(ROOT)}:{line}"
            body = textwrap.indent(source, "    ")
            text = f"\n\ndef example_{len(parts)}() -> None:  # {name}\n"
            starts.append((("".join(parts) + text).count("\n"), name, block_hash(source)))
            parts.append(text + body)
    return "".join(parts), starts


def test_the_script_holds_every_example() -> None:
    script, _starts = user_script()
    count = sum(len(blocks(p)) for p in doc_files())
    assert count >= 5  # the README has examples; an empty script would prove nothing
    assert script.count("\ndef example_") == count
    compile(script, "user_script.py", "exec")


def test_readme_examples_pass_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    text, starts = user_script()
    script = tmp_path / "user_script.py"
    script.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            "",
            str(script),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    failing: dict[str, str] = {}
    for m in re.finditer(r"^user_script\.py:(\d+): error: ", proc.stdout, re.M):
        line = int(m.group(1))
        _first, name, digest = max(s for s in starts if s[0] <= line)
        failing[digest] = name
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    unexpected = {d: n for d, n in failing.items() if d not in KNOWN_UNTYPED}
    assert not unexpected, f"examples that fail mypy --strict: {unexpected}\n{proc.stdout}"
    fixed = set(KNOWN_UNTYPED) - set(failing)
    assert not fixed, f"listed in KNOWN_UNTYPED but type-check now: {fixed}"
