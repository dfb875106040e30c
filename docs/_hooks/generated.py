"""mkdocs hook: pages that show what the code says, generated at build time.

``<!-- gitodb:cli-usage -->`` becomes every command's ``-h`` text (from its
``OptionParser`` or its usage text, as ``gitodb <command> -h`` prints it) and
``<!-- gitodb:auto-ranking -->`` the ``auto`` backend ranking of
``gitodb.compress.selection`` with the measurement behind each choice, so neither
page can drift from the code.  The images of ``benchmarks/results/`` are added to the
site, so that the result files included by ``benchmarks.md`` show them.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def _cli_usage() -> str:
    from gitodb.cli.main import COMMANDS, main

    parts = []
    for name in sorted(COMMANDS):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main([name, "-h"])
        module = importlib.import_module(f"gitodb.cli.{COMMANDS[name]}")
        summary = (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        parts.append(f"## {name}\n\n{summary}\n\n```text\n{out.getvalue().rstrip()}\n```\n")
    return "\n".join(parts)


def _auto_ranking() -> str:
    from gitodb.compress.selection import AUTO_RANKING, OPERATION_TITLES

    rows = ["| operation | `auto` order, fastest first | why |", "| --- | --- | --- |"]
    for op, (order, why) in AUTO_RANKING.items():
        rows.append(f"| {OPERATION_TITLES.get(op, op)} | {', '.join(order)} | {why} |")
    return "\n".join(rows) + "\n"


_MARKERS = {
    "<!-- gitodb:cli-usage -->": _cli_usage,
    "<!-- gitodb:auto-ranking -->": _auto_ranking,
}


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    """Replace each marker in a page with the text generated for it."""
    for marker, make in _MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def on_files(files: Any, config: Any) -> Any:
    """Serve ``benchmarks/results/*.png`` beside ``benchmarks.md``, which includes their pages."""
    from mkdocs.structure.files import File

    for image in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, image.name, abs_src_path=str(image)))
    return files
