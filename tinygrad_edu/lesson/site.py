"""`tinygrad-edu site build OUT`: the lessons as a JupyterLite site, nothing to install.

The folder it writes is served as it is by any static host (GitHub Pages, `python -m
http.server`): JupyterLab runs in the learner's browser, and the kernel is Pyodide
(CPython compiled to WebAssembly) in a web worker, so no server runs a line of Python.
What goes in, and where each piece comes from (all pinned in `site_pins.json`):

- the learner copies of every lesson, stripped as `tinygrad-edu lessons` strips them;
- the Pyodide runtime: the npm package `pyodide@0.27.7` (its tarball's sha256 pinned);
- the Pyodide packages the kernel and the lessons load (numpy, IPython, matplotlib and
  what they need): each file checked against the sha256 in the Pyodide lock that the
  npm package itself ships, wherever the file came from (`--pyodide-packages`);
- this toolkit's wheel, with Graphviz compiled to WebAssembly (npm
  `@hpcc-js/wasm-graphviz`, sha256 pinned) put beside `render/wasm.py`, and the pure
  Python wheels it needs in the browser (ipywidgets, anywidget, ...; sha256 pinned);
- JupyterLite itself (pinned `jupyterlite-core` and `jupyterlite-pyodide-kernel`).

The site's Pyodide lock lists exactly the files the site holds, plus entries for the
toolkit and its wheels, so a lesson's `import tinygrad_edu` loads them with no `%pip`
cell, and nothing is ever asked of a CDN or PyPI (the PyPI fallback is off).
Downloads are kept in a cache (`--cache`), so a second build fetches nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

PINS = json.loads(Path(__file__).with_name("site_pins.json").read_text(encoding="utf-8"))
WASM_JS = "tinygrad_edu/render/graphviz_wasm.js"  # where render/wasm.py looks for it
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
# the page extensions the site needs (the kernel, ipywidgets' manager, anywidget), and no
# other: JupyterLab extensions of the build machine's own Jupyter (notebook 7's, ...) are
# built against another JupyterLab and break the page
PAGE_EXTENSIONS = (
    "@jupyterlite/pyodide-kernel-extension",
    "@jupyter-widgets/jupyterlab-manager",
    "anywidget",
)

# what jupyterlite-pyodide-kernel 0.6 installs at every kernel start, each install
# awaited before the next, unless Pyodide's own start loaded it (its packages option),
# which fetches and unpacks them all at once: every one of them in the site's lock
STARTUP_PACKAGES = (
    *("micropip", "ssl", "sqlite3", "jedi", "ipython", "comm"),
    *("piplite", "ipykernel", "pyodide_kernel"),  # the kernel's own (KERNEL_OWN)
)
# the bytecode wheels (site_bytecode.py): the kernel's, loaded at its start, and the
# lessons', loaded with the toolkit
BYTECODE_KERNEL = "tinygrad-edu-kernel-pyc"
BYTECODE_LESSONS = "tinygrad-edu-lessons-pyc"
# the kernel's own wheels, which jupyterlite-pyodide-kernel ships beside its page code,
# given lock entries so that Pyodide's start loads them too; name -> what each needs
KERNEL_OWN = {
    "piplite": ["micropip"],
    "ipykernel": [],
    "pyodide-kernel": ["ipykernel", "comm", "ipython", "jedi", "ssl", "sqlite3"],
}


class SiteError(RuntimeError):
    """A piece of the site could not be fetched, or is not the file that was pinned."""


def default_cache() -> Path:
    """~/.cache/tinygrad_edu/site (or $XDG_CACHE_HOME/...): downloads kept between builds."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tinygrad_edu" / "site"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def checked(path: Path, expected: str, what: str) -> Path:
    """`path`, after checking its sha256; a file that differs is deleted and refused."""
    got = sha256(path)
    if got != expected:
        path.unlink()
        raise SiteError(f"{what}: sha256 {got} is not the pinned {expected}; the file was removed")
    return path


def npm_tarball(pin: dict, cache: Path) -> Path:
    """The npm package's tarball (`npm pack` into the cache), its sha256 checked."""
    target = cache / "npm" / pin["tarball"]
    if target.is_file() and sha256(target) == pin["tarball_sha256"]:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise SiteError(f"{pin['npm']}: npm is needed to fetch it (install Node.js)")
    target.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "pack", pin["npm"], "--silent"], cwd=target.parent, capture_output=True, text=True
    )
    if proc.returncode != 0 or not target.is_file():
        said = (proc.stderr.strip().splitlines() or ["no tarball written"])[-1]
        raise SiteError(f"npm pack {pin['npm']} failed: {said}")
    return checked(target, pin["tarball_sha256"], pin["npm"])


def from_tarball(tarball: Path, member: str) -> bytes:
    with tarfile.open(tarball, "r:gz") as tar:
        f = tar.extractfile(member)
        if f is None:
            raise SiteError(f"{tarball.name}: no file {member}")
        return f.read()


def lock_closure(lock: dict, roots: Iterable[str]) -> list[str]:
    """The lock's package names that `roots` need, with every dependency, sorted.

    Example:
        >>> lock = {"packages": {"a": {"depends": ["b_c"]}, "b-c": {"depends": []},
        ...                      "d": {"depends": []}}}
        >>> lock_closure(lock, ["a"])
        ['a', 'b-c']
    """
    by_key = {_key(name): name for name in lock["packages"]}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = by_key[_key(todo.pop())]
        if name not in seen:
            seen.add(name)
            todo += lock["packages"][name]["depends"]
    return sorted(seen)


def _key(name: str) -> str:
    return re.sub(
        r"[-_.]+", "-", name
    ).lower()  # PEP 503: numpy, typing_extensions == typing-extensions


class PackageSource:
    """Where Pyodide's package files come from: a base URL, a folder, or a zip (a wheel)
    holding them anywhere inside. Every file is checked against the lock's sha256."""

    def __init__(self, where: str):
        self.where = where
        self._members: dict[str, str] | None = None

    def fetch(self, name: str, target: Path) -> None:
        if re.match(r"https?://", self.where):
            with urllib.request.urlopen(self.where.rstrip("/") + "/" + name, timeout=120) as r:
                target.write_bytes(r.read())
        elif os.path.isdir(self.where):
            shutil.copyfile(os.path.join(self.where, name), target)
        else:
            with zipfile.ZipFile(self.where) as z:
                if self._members is None:
                    self._members = {os.path.basename(m): m for m in z.namelist()}
                if name not in self._members:
                    raise FileNotFoundError(name)
                target.write_bytes(z.read(self._members[name]))


def pyodide_packages(
    lock: dict, names: list[str], source: PackageSource, cache: Path
) -> list[Path]:
    """The package files of `names`, from the cache or `source`, each checked by sha256."""
    folder = cache / f"pyodide-{lock['info']['version']}"
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name in names:
        entry = lock["packages"][name]
        target = folder / entry["file_name"]
        if not (target.is_file() and sha256(target) == entry["sha256"]):
            try:
                source.fetch(entry["file_name"], target)
            except (OSError, KeyError) as e:
                raise SiteError(
                    f"Pyodide package {entry['file_name']}: not found in {source.where} ({e})"
                ) from None
            checked(target, entry["sha256"], f"Pyodide package {entry['file_name']}")
        files.append(target)
    return files


def kernel_wheels(cache: Path) -> list[Path]:
    """The pure-Python wheels the toolkit needs in the browser, from PyPI, sha256 pinned."""
    wanted = [(file, digest) for file, digest, _ in PINS["kernel_wheels"].values()]
    return pinned_wheels(wanted, cache / "wheels", "the kernel wheels")


def pinned_wheels(wanted: list[tuple[str, str]], folder: Path, what: str) -> list[Path]:
    """The py3-none-any wheels `wanted` (file name, sha256) in `folder`: those not there
    yet come from PyPI through `pip download --require-hashes`."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = [
        (file, digest)
        for file, digest in wanted
        if not ((folder / file).is_file() and sha256(folder / file) == digest)
    ]
    if missing:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
            for file, digest in missing:
                name, version = file.split("-")[:2]
                req.write(f"{name}=={version} --hash=sha256:{digest}\n")
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        # the py3-none-any wheels only: the browser cannot use a compiled one
        pip += ["--platform", "any", "--implementation", "py", "--abi", "none"]
        pip += ["--python-version", "3.12", "--require-hashes", "-r", req.name, "-d", str(folder)]
        proc = subprocess.run(pip, capture_output=True, text=True)
        os.unlink(req.name)
        if proc.returncode != 0:
            said = (proc.stderr.strip().splitlines() or ["failed"])[-1]
            raise SiteError(f"pip download of {what}: {said}")
    return [checked(folder / file, digest, file) for file, digest in wanted]


def toolkit_wheel(source: Path, graphviz_js: bytes, dest: Path) -> Path:
    """This checkout's wheel, with the WebAssembly Graphviz added beside render/wasm.py."""
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp, str(source)]
        proc = subprocess.run(pip, capture_output=True, text=True)
        built = sorted(Path(tmp).glob("tinygrad_edu-*.whl"))
        if proc.returncode != 0 or not built:
            said = (proc.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise SiteError(f"building the tinygrad_edu wheel from {source}: {said}")
        target = dest / built[0].name
        add_to_wheel(built[0], target, WASM_JS, graphviz_js)
    return target


def add_to_wheel(wheel: Path, target: Path, name: str, data: bytes) -> None:
    """Copy `wheel` to `target` with one more file, listed in RECORD with its hash."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            content = src.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                content += f"{name},sha256={digest},{len(data)}\n".encode()
                out.writestr(name, data)
            out.writestr(item, content)


def lock_entry(name: str, wheel: Path, depends: list[str]) -> dict:
    version = wheel.name.split("-")[1]
    return {
        "name": name,
        "version": version,
        "file_name": wheel.name,
        "install_dir": "site",
        "sha256": sha256(wheel),
        "package_type": "package",
        "imports": [name.replace("-", "_")],
        "depends": depends,
        "unvendored_tests": False,
    }


def kernel_own_wheels() -> dict[str, tuple[Path, list[str]]]:
    """The Pyodide kernel's own wheels (piplite, ipykernel, pyodide_kernel), from the
    installed jupyterlite-pyodide-kernel, with what each needs: given lock entries, they
    load with the others at Pyodide's start instead of one by one after it."""
    from jupyter_core.paths import jupyter_path

    wheels: dict[str, tuple[Path, list[str]]] = {}
    for name, depends in KERNEL_OWN.items():
        found = sorted(
            w
            for p in jupyter_path("labextensions")
            for w in (Path(p) / PAGE_EXTENSIONS[0] / "static" / "pypi").glob(
                f"{name.replace('-', '_')}-*-py3-none-any.whl"
            )
        )
        if not found:
            raise SiteError(
                f"the Pyodide kernel's wheel {name} was not found: pip install -e .[site]"
            )
        wheels[name] = (found[0], depends)
    return wheels


def page_extensions(dest: Path, cache: Path) -> None:
    """Copy PAGE_EXTENSIONS into `dest`: those pinned in PINS["page_extension_wheels"]
    from that wheel, the others from this Python's Jupyter folders."""
    from jupyter_core.paths import jupyter_path

    pinned = PINS["page_extension_wheels"]
    wheels = pinned_wheels(
        [tuple(pinned[name]) for name in pinned], cache / "wheels", "the page extensions"
    )
    wheel_of = dict(zip(pinned, wheels))  # pinned_wheels keeps the order it was given
    for name in PAGE_EXTENSIONS:
        if name in wheel_of:
            labextension_from_wheel(wheel_of[name], name, dest)
            continue
        found = [
            Path(p) / name
            for p in jupyter_path("labextensions")
            if (Path(p) / name / "package.json").is_file()
        ]
        if not found:
            raise SiteError(
                f"the JupyterLab extension {name} is not installed: pip install -e .[site]"
            )
        shutil.copytree(found[0], dest / name, ignore=shutil.ignore_patterns("*.map"))


def labextension_from_wheel(wheel: Path, name: str, dest: Path) -> Path:
    """The page extension `name` out of a wheel's data folder
    (`*.data/data/share/jupyter/labextensions/NAME/`) into `dest/NAME`, without source maps."""
    inside = f"/data/share/jupyter/labextensions/{name}/"
    with zipfile.ZipFile(wheel) as z:
        members = {}
        for m in z.infolist():
            top, sep, rest = m.filename.partition(inside)
            if sep and top.endswith(".data") and "/" not in top and not m.is_dir():
                members[rest] = m
        if "package.json" not in members:
            raise SiteError(f"{wheel.name}: no page extension {name} (no {inside}package.json)")
        for rest, m in members.items():
            if rest.endswith(".map"):
                continue
            target = dest / name / rest
            if ".." in Path(rest).parts or Path(rest).is_absolute():
                raise SiteError(f"{wheel.name}: {m.filename} points outside the extension")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(m))
    return dest / name


def lite_config() -> dict:
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "tinygrad_edu lessons",
            # every file is in the site: a name it lacks is an error, never a PyPI download
            "litePluginSettings": {
                KERNEL_PLUGIN: {
                    "disablePyPIFallback": True,
                    # the packages the kernel installs at every start, one after another,
                    # loaded together by Pyodide's start instead (all in the site's lock)
                    # (with the bytecode of what the start imports)
                    "loadPyodideOptions": {"packages": [*STARTUP_PACKAGES, BYTECODE_KERNEL]},
                }
            },
            "exposeAppInBrowser": True,  # `window.jupyterapp`, which the browser tests drive
        },
    }


def build_site(
    out: Path,
    lessons: Path,
    checkout: Path,
    cache: Path,
    packages: str,
    say: Callable[[str], None] = print,
) -> Path:
    """Write the site into `out` (replaced if it is a site already); returns `out`."""
    from . import cli  # the lessons command's stripping; cli imports this module lazily

    out = out.resolve()
    # absolute: `jupyter lite build` runs in the source folder, where a relative path to
    # it would name nothing, and the site would come out without Pyodide and unsaid
    cache = cache.resolve()
    if out.exists() and any(out.iterdir()) and not (out / "jupyter-lite.json").is_file():
        raise SiteError(f"{out}: a folder that is not a site already; give an empty or new one")
    cache.mkdir(parents=True, exist_ok=True)
    # the build's source folder must not start with the output's path: jupyterlite-core
    # then silently skips its jupyter-lite.json (the settings in lite_config)
    with tempfile.TemporaryDirectory(prefix="tinygrad-edu-lite-", dir=cache) as tmp:
        lite = Path(tmp)
        if str(lite).startswith(str(out)):
            raise SiteError(f"{out}: put the site outside the build cache {cache}")
        pyodide_folder(lite / "static" / "pyodide", checkout, cache, packages, say)
        cli.write_student_copies(lessons, lite / "files")
        say(f"jupyter lite build -> {out}")
        jupyter_lite_build(lite, out, cache)
    return out


def pyodide_folder(
    folder: Path, checkout: Path, cache: Path, packages: str, say: Callable[[str], None]
) -> None:
    """Pyodide's runtime, its package files, the wheels and a lock naming exactly those."""
    pyodide_pin, gv_pin = PINS["pyodide"], PINS["graphviz_wasm"]
    say(f"npm: {pyodide_pin['npm']}, {gv_pin['npm']} (cache {cache})")
    runtime = npm_tarball(pyodide_pin, cache)
    lock = json.loads(from_tarball(runtime, "package/pyodide-lock.json"))
    if lock["info"]["version"] != pyodide_pin["version"]:
        raise SiteError(f"{runtime.name}: its lock is for Pyodide {lock['info']['version']}")
    graphviz_js = from_tarball(npm_tarball(gv_pin, cache), gv_pin["file"])
    names = lock_closure(lock, pyodide_pin["roots"])
    say(f"Pyodide packages: {len(names)} files from {packages}, sha256 checked against its lock")
    package_files = pyodide_packages(lock, names, PackageSource(packages), cache)
    say("wheels: the kernel's from PyPI (sha256 pinned), tinygrad_edu's built here")
    wheels = kernel_wheels(cache)

    folder.mkdir(parents=True)
    for file in pyodide_pin["runtime"]:
        (folder / file).write_bytes(from_tarball(runtime, f"package/{file}"))
    for path in [*package_files, *wheels]:
        shutil.copyfile(path, folder / path.name)
    ours = toolkit_wheel(checkout, graphviz_js, folder)
    # only what the site holds: a package it lacks is "not found", never a 404 or a CDN
    site_lock = {"info": lock["info"], "packages": {n: lock["packages"][n] for n in names}}
    for name, (file, _, depends) in PINS["kernel_wheels"].items():
        site_lock["packages"][name] = lock_entry(name, folder / file, depends)
    site_lock["packages"]["tinygrad-edu"] = lock_entry(
        "tinygrad-edu", ours, PINS["toolkit_depends"]
    )
    for name, (wheel, depends) in kernel_own_wheels().items():
        shutil.copyfile(wheel, folder / wheel.name)
        site_lock["packages"][name] = lock_entry(name, folder / wheel.name, depends)
    (folder / "pyodide-lock.json").write_text(json.dumps(site_lock, indent=1))
    say("bytecode: the site's Pyodide, in Node, compiles what the kernel's start imports")
    add_bytecode(folder, site_lock)


def add_bytecode(folder: Path, site_lock: dict) -> None:
    """The kernel's and the lessons' bytecode wheels (site_bytecode.py), in the folder and
    its lock: the first loaded at the kernel's start, the second with the toolkit."""
    from . import site_bytecode as bc

    version = site_lock["packages"]["tinygrad-edu"]["version"]
    phases = [
        (BYTECODE_KERNEL, list(STARTUP_PACKAGES), bc.KERNEL_IMPORTS),
        (BYTECODE_LESSONS, ["tinygrad-edu"], bc.LESSON_IMPORTS),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            bc.compile_in_pyodide(folder, phases, Path(tmp))
        except (bc.BytecodeError, subprocess.TimeoutExpired) as e:
            raise SiteError(str(e)) from None
        for name, _, _ in phases:
            wheel = bc.bytecode_wheel(Path(tmp) / name, name, version, folder)
            site_lock["packages"][name] = lock_entry(name, wheel, [])
    toolkit = site_lock["packages"]["tinygrad-edu"]
    toolkit["depends"] = [*toolkit["depends"], BYTECODE_LESSONS]
    (folder / "pyodide-lock.json").write_text(json.dumps(site_lock, indent=1))


def jupyter_lite_build(lite: Path, out: Path, cache: Path) -> None:
    """`jupyter lite build` of the source folder `lite` into `out`, with our page extensions only."""
    (lite / "jupyter-lite.json").write_text(json.dumps(lite_config(), indent=2))
    page_extensions(lite / "page_extensions", cache)
    build_config = {
        "LiteBuildConfig": {"ignore_sys_prefix": ["federated_extensions"]},
        "FederatedExtensionAddon": {"extra_labextensions_path": [str(lite / "page_extensions")]},
    }
    (lite / "jupyter_lite_config.json").write_text(json.dumps(build_config))
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite)]
    cmd += ["--contents", str(lite / "files"), "--output-dir", str(out), "--no-sourcemaps"]
    proc = subprocess.run(cmd, cwd=lite, capture_output=True, text=True)
    if proc.returncode != 0:
        said = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SiteError(f"jupyter lite build failed:\n{said}")
    kernel_imports_off_the_drive(out / "extensions" / "@jupyterlite" / "pyodide-kernel-extension")


# The kernel's worker (jupyterlite-pyodide-kernel 0.6.x) mounts the learner's files at
# /drive and moves there before its start imports about 450 modules. Pyodide's sys.path
# begins with '' (the current folder), so each top-level import first asks the drive
# about that folder: a synchronous request through the service worker to the page, about
# 80 of them, 1-2.5 s of a cold start. The worker is rewritten to move there after its
# imports instead; the learner's cells run in /drive as before.
DRIVE_MOUNT = re.compile(r"(\w+)\.mount\((\w+),\{\},(\w+)\),\1\.chdir\(\3\),")
DRIVE_CWD_LATE = (
    'i.push("import pyodide_kernel"),e.mountDrive&&this._localPath&&'
    'i.push("import os",`os.chdir("${this._localPath}")`)',
    'i.push("import pyodide_kernel"),e.mountDrive&&'
    'i.push("import os",`os.chdir("/drive/${this._localPath||""}")`)',
)


def kernel_imports_off_the_drive(extension: Path) -> None:
    """Rewrite the kernel's worker bundles under `extension`'s static folder so that the
    start's imports run before the move into /drive (see DRIVE_MOUNT's comment)."""
    old, new = DRIVE_CWD_LATE
    changed = 0
    for js in sorted((extension / "static").glob("*.js")):
        text = js.read_text(encoding="utf-8")
        if "initFilesystem" not in text:
            continue
        text, mounts = DRIVE_MOUNT.subn(r"\1.mount(\2,{},\3),", text)
        starts = text.count(old)
        # every worker class that moves in early must move in late, or its cells would
        # run outside the learner's files
        if mounts == 0 or starts != text.count("async initKernel("):
            raise SiteError(
                f"{js.name}: the Pyodide kernel's worker is not the one this build knows "
                f"(moves into /drive: {mounts}, kernel starts: {starts}); "
                "see DRIVE_MOUNT in tinygrad_edu/lesson/site.py"
            )
        js.write_text(text.replace(old, new), encoding="utf-8")
        changed += 1
    if not changed:
        raise SiteError(f"{extension}: no Pyodide kernel worker found to rewrite")


def size(folder: Path) -> tuple[int, int]:
    """(bytes, files) under `folder`."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)
