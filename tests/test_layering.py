"""Only gitodb.compress may import a zlib library (the narrow waist, DESIGN.md)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
ZLIB_MODULES = {"zlib", "zlib_ng", "isal", "deflate"}
ALLOWED = SRC / "gitodb" / "compress"


def zlib_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` for every import of a zlib library in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Name) and node.func.id == "__import__")
                   or (isinstance(node.func, ast.Attribute)
                       and node.func.attr == "import_module"))):
            names = [node.args[0].value]
        found += [(node.lineno, n) for n in names if n.split(".")[0] in ZLIB_MODULES]
    return found


def test_detector_sees_every_form() -> None:
    src = ("import zlib\nfrom zlib_ng import zlib_ng\nimport isal.isal_zlib as z\n"
           "from deflate import zlib_decompress\nimportlib.import_module('zlib')\n"
           "__import__('isal')\nimport zlibx\nfrom . import zlib\n")
    assert [m for _, m in zlib_imports(src)] == [
        "zlib", "zlib_ng", "isal.isal_zlib", "deflate", "zlib", "isal"]


def test_only_compress_imports_zlib() -> None:
    files = sorted(SRC.rglob("*.py"))
    assert files, f"no sources under {SRC}"
    offenders = []
    for path in files:
        if ALLOWED in path.parents:
            continue
        for line, module in zlib_imports(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(SRC)}:{line}: imports {module}")
    assert not offenders, "only gitodb.compress may import zlib libraries:\n" + "\n".join(
        offenders)
