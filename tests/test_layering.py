"""The layers: only gitodb.compress imports a zlib library; each layer imports only those above."""

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
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            names = [node.args[0].value]
        found += [(node.lineno, n) for n in names if n.split(".")[0] in ZLIB_MODULES]
    return found


def test_detector_sees_every_form() -> None:
    src = (
        "import zlib\nfrom zlib_ng import zlib_ng\nimport isal.isal_zlib as z\n"
        "from deflate import zlib_decompress\nimportlib.import_module('zlib')\n"
        "__import__('isal')\nimport zlibx\nfrom . import zlib\n"
    )
    assert [m for _, m in zlib_imports(src)] == [
        "zlib",
        "zlib_ng",
        "isal.isal_zlib",
        "deflate",
        "zlib",
        "isal",
    ]


def test_only_compress_imports_zlib() -> None:
    files = sorted(SRC.rglob("*.py"))
    assert files, f"no sources under {SRC}"
    offenders = []
    for path in files:
        if ALLOWED in path.parents:
            continue
        for line, module in zlib_imports(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(SRC)}:{line}: imports {module}")
    assert not offenders, "only gitodb.compress may import zlib libraries:\n" + "\n".join(offenders)


#: The layers of docs/architecture.md, top first: each may import only those above it.
LAYERS = [
    "types",
    "lazyre",
    "lazymod",
    "purepath",
    "errors",
    "trace2",
    "fileio",
    "_native",
    "compress",
    "durable",
    "lockfile",
    "objects",
    "loose",
    "pack",
    "reftable",
    "refs",
    "repo",
    "history",
    "bulk",
    "dask",
    "cli",
]


def gitodb_imports(source: str) -> list[tuple[int, str]]:
    """``(line, layer)`` of every absolute ``gitodb.<layer>`` import, at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [
            (node.lineno, n.split(".")[1])
            for n in names
            if n.startswith("gitodb.") and n.count(".") >= 1
        ]
    return found


def test_layers_import_only_layers_above() -> None:
    offenders = []
    for path in sorted((SRC / "gitodb").rglob("*.py")):
        first = path.relative_to(SRC / "gitodb").parts[0].removesuffix(".py")
        if first in ("__init__", "__main__"):
            continue
        assert first in LAYERS, f"{path}: not in a layer of docs/architecture.md"
        for line, layer in gitodb_imports(path.read_text(encoding="utf-8")):
            if layer not in LAYERS or LAYERS.index(layer) > LAYERS.index(first):
                offenders.append(f"{path.relative_to(SRC)}:{line}: {first} imports {layer}")
    assert not offenders, "a layer imports one below it:\n" + "\n".join(offenders)
