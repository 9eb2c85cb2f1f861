"""The docs cite only files that exist.

Every path-looking word in README.md, docs/*.md and notebooks/README.md (`graph/walk.py`,
`docs/compile.md`, `tests/test_node_view.py`, `walk.py`) must name a file in the
repository: a path counts as found when some tracked file's path ends with it, so a
doc may write `graph/walk.py` for `tinygrad_edu/graph/walk.py`, or `walk.py` inside a
section about the graph layer. A renamed or deleted module then fails here, naming the
doc and the line, instead of sending a reader to a file that is not there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", ROOT / "notebooks" / "README.md", *(ROOT / "docs").glob("*.md")])
SUFFIXES = ("py", "md", "ipynb", "toml", "cfg", "js", "css", "json", "yml", "yaml", "txt")
# a word made of path characters, ending in a file suffix, not part of a URL or module path
PATH = re.compile(
    r"(?<![\w/.:-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:" + "|".join(SUFFIXES) + r"))(?![\w/])"
)
IGNORED_DIRS = {".git", "node_modules", "__pycache__", ".ipynb_checkpoints", "build", "dist"}


def _repository_files() -> list[str]:
    files = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if path.is_file() and not IGNORED_DIRS.intersection(rel.parts):
            files.append(rel.as_posix())
    return files


def _exists(cited: str, files: list[str]) -> bool:
    while cited.startswith(("./", "../")):  # relative to the doc: the suffix decides
        cited = cited.split("/", 1)[1]
    return any(f == cited or f.endswith("/" + cited) for f in files)


def _cited_paths(doc: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        for match in PATH.finditer(line):
            word = match.group(1)
            if "://" in line[max(0, match.start() - 60) : match.start()] and "/" in word:
                continue  # part of a URL
            found.append((number, word))
    return found


# files the reader makes, in examples: their own folders and the lesson they write
READERS_FOLDERS = ("course/", "release/", "submissions/", "student/", "my_lessons/", "lab/")
EXAMPLE_NAMES = ("NN_topic.ipynb", "12_my_topic.ipynb", "11_attention_masks.ipynb")


def _is_an_example(word: str) -> bool:
    return word.startswith(READERS_FOLDERS) or word.endswith(EXAMPLE_NAMES)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_doc_cites_exists(doc):
    files = _repository_files()
    missing = [
        f"{doc.relative_to(ROOT).as_posix()}:{line}: {word}"
        for line, word in _cited_paths(doc)
        if not _is_an_example(word) and not _exists(word, files)
    ]
    assert missing == [], "cited but not in the repository:\n" + "\n".join(missing)


def test_the_checker_finds_paths_and_misses(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "read `graph/walk.py` and docs/compile.md, then graph/static_view.py;\n"
        "see https://example.org/a/b.py and tg.static.trace, not a file\n"
    )
    cited = _cited_paths(doc)
    assert cited == [(1, "graph/walk.py"), (1, "docs/compile.md"), (1, "graph/static_view.py")]
    files = _repository_files()
    assert [_exists(word, files) for _, word in cited] == [True, True, False]
