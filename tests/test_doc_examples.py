"""Every Python block of README.md and docs/*.md runs, against a repository built here.

The blocks are found anew each run (a block added to the README is a new test). Each
runs alone, in a fresh namespace, with the current directory inside a fresh copy of
the test repository; the text ``path/to/repo`` in a block stands for that repository.
A block that is not meant to run starts with the line ``# not run`` (and says why); a
block that imports an optional dependency that is not installed is skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import pytest

from helpers import git

ROOT = Path(__file__).resolve().parent.parent
SKIP_MARK = "# not run"
#: the extras' modules: a block that needs one that is not installed is skipped
OPTIONAL_MODULES = {"isal", "deflate", "pyarrow", "dask", "pandas", "distributed"}
PLACEHOLDER = "path/to/repo"
_FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)

#: Blocks known not to run, by the hash of their text: the README's own text is the
#: coordinator's; the fixed text is in the notes. A changed block runs for real, and
#: a listed one that starts to pass fails here (strict), so the list stays true.
KNOWN_BROKEN: dict[str, str] = {}


def doc_files() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[tuple[int, str]]:
    """``(line, source)`` of each Python block of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in _FENCE.finditer(text)]


def block_id(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _cases() -> list[object]:
    cases = []
    for path in doc_files():
        for line, source in blocks(path):
            name = f"{path.relative_to(ROOT)}:{line}"
            marks = []
            if source.lstrip().startswith(SKIP_MARK):
                marks.append(pytest.mark.skip(reason=f"{name} is marked '{SKIP_MARK}'"))
            reason = KNOWN_BROKEN.get(block_id(source))
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            cases.append(pytest.param(name, source, id=name, marks=marks))
    return cases


@pytest.fixture(scope="module")
def example_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main with three commits (README.md, src/main.py), tag v1.0, packed and loose."""
    path = tmp_path_factory.mktemp("docs") / "repo"
    git("init", "-q", "-b", "main", path)
    (path / "src").mkdir()
    for i in range(3):
        (path / "README.md").write_text(f"# example\n\nversion {i}\n")
        (path / "src" / "main.py").write_text(f"print({i})\n")
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", f"commit {i}", cwd=path)
        if i == 1:
            git("tag", "-a", "-m", "v1.0", "v1.0", cwd=path)
            git("repack", "-q", "-a", "-d", cwd=path)
    return path


def test_blocks_are_found() -> None:
    found = [name for path in doc_files() for name in blocks(path)]
    assert len(found) >= 3, "no Python blocks found: is the fence pattern right?"


@pytest.mark.parametrize("name, source", _cases())
def test_doc_block_runs(
    name: str, source: str, example_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitodb import compress

    repo = tmp_path / "repo"
    shutil.copytree(example_repo, repo, symlinks=True)
    monkeypatch.chdir(repo)
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    code = compile(source.replace(PLACEHOLDER, str(repo)), name, "exec")
    try:
        exec(code, {"__name__": "__doc_example__"})
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] not in OPTIONAL_MODULES:
            raise
        pytest.skip(f"{name} needs {e.name}, an optional dependency not installed here")
    finally:
        compress.set_backend(None)
