"""Bytecode for the site's kernel, compiled ahead by the site's own Pyodide (in Node).

Pyodide's package files carry Python source only, so the browser compiles every module
it imports: at the kernel's start about 500 of them (IPython, jedi, prompt_toolkit, ...),
which was a quarter of the cold start (2.8 s of 12 s measured under load). The build
runs the site's Pyodide once in Node (npm's Node, which the build needs anyway), loads
the same packages from the site's own folder, imports what the kernel's start imports,
and writes each imported module's bytecode (`.pyc`, checked-hash: Python compares it
with the source's hash at import and compiles afresh if they differ, so a stale file can
only cost time). Two wheels carry them: one loaded at the kernel's start with the
kernel's packages, one that the toolkit depends on, loaded with numpy on the first
`import tinygrad_edu`. Pyodide's own files are untouched (they stay the release's files,
byte for byte); the wheels only add `__pycache__` files beside them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from base64 import urlsafe_b64encode
from pathlib import Path

# What the kernel's start imports (jupyterlite-pyodide-kernel 0.6: piplite, then its own
# package, which imports IPython), and what a lesson's first cells import after it
KERNEL_IMPORTS = "import piplite.piplite, pyodide_kernel"
LESSON_IMPORTS = (
    "import tinygrad_edu, tinygrad_edu.render, tinygrad_edu.widgets, tinygrad_edu.widgets.live,"
    " tinygrad_edu.lesson.unanswered, tinygrad_edu.data, tinygrad_edu.nn, tinygrad_edu.optim,"
    " ipywidgets, anywidget\n"
    # the import starts the WebAssembly Graphviz's load, which Node cannot do (a Blob URL)
    # and the bytecode does not need: stopped before it runs
    "from tinygrad_edu.render import wasm\nwasm._STATE.pop('task').cancel()"
)
# Node: Pyodide from the site's folder; Python lists the modules each phase imported and
# writes their bytecode under /out (the host's temporary folder)
NODE_SCRIPT = """
import { loadPyodide } from %(loader)s;
const [folder, out, phases] = [%(folder)s, %(out)s, %(phases)s];
const py = await loadPyodide({indexURL: folder});
py.FS.mkdirTree("/out");
py.FS.mount(py.FS.filesystems.NODEFS, {root: out}, "/out");
py.runPython(%(helper)s);
for (const [name, packages, code] of phases) {
    await py.loadPackage(packages, {messageCallback: () => {}});
    await py.runPythonAsync(`_tg_phase(${JSON.stringify(name)}, ${JSON.stringify(code)})`);
}
"""
HELPER = """
import importlib.util, os, py_compile, sys
_tg_seen = set(sys.modules)
_SITE = "/lib/python3.12/site-packages/"

def _tg_phase(name, code):
    exec(code, {})
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # the kernel's import takes them
    new = set(sys.modules) - _tg_seen
    _tg_seen.update(new)
    for mod in sorted(new):
        src = getattr(sys.modules[mod], "__file__", None) or ""
        if src.startswith(_SITE) and src.endswith(".py"):
            pyc = importlib.util.cache_from_source(src)[len(_SITE):]
            py_compile.compile(src, cfile=f"/out/{name}/{pyc}", doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
"""


class BytecodeError(RuntimeError):
    """Node could not run the site's Pyodide to compile the bytecode."""


def compile_in_pyodide(folder: Path, phases: list[tuple[str, list[str], str]], out: Path) -> None:
    """Run the site's Pyodide (from `folder`) in Node: for each phase (name, lock packages
    to load, code to run) the bytecode of the modules it imported, under `out / name`."""
    node = shutil.which("node")
    if node is None:
        raise BytecodeError("Node.js is needed to compile the kernel's bytecode (npm's Node)")
    script = NODE_SCRIPT % {
        "loader": json.dumps((folder / "pyodide.mjs").as_uri()),
        "folder": json.dumps(str(folder) + "/"),
        "out": json.dumps(str(out)),
        "phases": json.dumps(phases),
        "helper": json.dumps(HELPER),
    }
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "compile.mjs").write_text(script, encoding="utf-8")
        proc = subprocess.run(
            [node, "compile.mjs"], cwd=tmp, capture_output=True, text=True, timeout=600
        )
    if proc.returncode != 0:
        said = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise BytecodeError(f"Node running Pyodide to compile the bytecode failed:\n{said}")


def bytecode_wheel(files: Path, name: str, version: str, dest: Path) -> Path:
    """A wheel `name` holding every file under `files` at the same relative path (for
    site-packages), with its dist-info; entries in a fixed order and date, so the same
    bytecode gives the same wheel."""
    dist = f"{name.replace('-', '_')}-{version}"
    info = f"{dist}.dist-info"
    entries = {p.relative_to(files).as_posix(): p.read_bytes() for p in files.rglob("*.pyc")}
    entries[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    entries[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: tinygrad-edu site build\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [
        f"{path},sha256={urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in sorted(entries.items())
    ]
    entries[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    target = dest / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(entries):
            entry = zipfile.ZipInfo(path, date_time=(2020, 2, 2, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED  # a ZipInfo's own default is stored
            z.writestr(entry, entries[path])
    return target
