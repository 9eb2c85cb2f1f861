"""Read and write notebook files as plain nbformat v4 JSON (no nbformat import needed).

The instructor commands only need cells, sources and outputs, so the JSON is handled
directly: the CLI then works with the package's own dependencies. Cell ids are
deterministic (`cell-1`, `cell-2`, ...) for new notebooks, so diffs stay small.
Lesson layer: standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def source_text(cell: dict) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def split_source(text: str) -> list[str]:
    """Store a source the way Jupyter does: a list of lines that keep their newlines."""
    return text.splitlines(keepends=True)


def markdown(text: str, index: int) -> dict:
    return {
        "cell_type": "markdown",
        "id": f"cell-{index}",
        "metadata": {},
        "source": split_source(text),
    }


def code(text: str, index: int) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": f"cell-{index}",
        "metadata": {},
        "outputs": [],
        "source": split_source(text),
    }


def new_notebook(cells: list[tuple[str, str]]) -> dict:
    """A v4.5 notebook from `(kind, text)` pairs, kind being "markdown" or "code"."""
    made = [
        (markdown if kind == "markdown" else code)(text, i)
        for i, (kind, text) in enumerate(cells, start=1)
    ]
    return {
        "cells": made,
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def read(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    if nb.get("nbformat") != 4:
        raise ValueError(
            f"{path}: expected an nbformat 4 notebook, got nbformat {nb.get('nbformat')!r}"
        )
    return nb


def write(nb: dict[str, Any], path: Path) -> None:
    # Jupyter's own layout (indent 1, sorted keys, trailing newline) keeps git diffs small
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
