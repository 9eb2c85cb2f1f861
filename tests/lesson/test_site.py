"""`tinygrad-edu site build`'s pieces that need no network: hash checks, the lock, the wheel.

The whole build, served and opened in Chromium, is tests/e2e/test_lite_site.py.
"""

import base64
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from tinygrad_edu.lesson import site
from tinygrad_edu.lesson.cli import main


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lock_of(files: dict[str, bytes]) -> dict:
    """A Pyodide lock naming `files` (name -> content); `a` depends on `b`."""
    packages = {}
    for name, data in files.items():
        packages[name] = {
            "name": name,
            "file_name": f"{name}-1.0-py3-none-any.whl",
            "sha256": digest(data),
            "depends": ["b"] if name == "a" else [],
        }
    return {"info": {"version": "0.27.7"}, "packages": packages}


def test_the_lock_closure_follows_depends_across_name_spellings():
    lock = {
        "packages": {
            "ipython": {"depends": ["prompt_toolkit", "traitlets"]},
            "prompt-toolkit": {"depends": ["wcwidth"]},
            "traitlets": {"depends": []},
            "wcwidth": {"depends": []},
            "scipy": {"depends": ["numpy"]},
            "numpy": {"depends": []},
        }
    }
    assert site.lock_closure(lock, ["ipython"]) == [
        "ipython",
        "prompt-toolkit",
        "traitlets",
        "wcwidth",
    ]


def test_package_files_come_from_a_zip_anywhere_inside_and_are_hash_checked(tmp_path):
    files = {"a": b"wheel a", "b": b"wheel b"}
    lock = lock_of(files)
    holder = tmp_path / "holder.whl"
    with zipfile.ZipFile(holder, "w") as z:
        for name, data in files.items():
            z.writestr(f"deep/inside/{name}-1.0-py3-none-any.whl", data)
    got = site.pyodide_packages(lock, ["a", "b"], site.PackageSource(str(holder)), tmp_path / "c")
    assert [p.read_bytes() for p in got] == [b"wheel a", b"wheel b"]
    assert got[0].parent == tmp_path / "c" / "pyodide-0.27.7"  # cached for the next build


def test_a_file_that_is_not_the_locked_one_is_refused_and_removed(tmp_path):
    lock = lock_of({"a": b"the real a"})
    folder = tmp_path / "mirror"
    folder.mkdir()
    (folder / "a-1.0-py3-none-any.whl").write_bytes(b"a tampered a")
    with pytest.raises(site.SiteError) as e:
        site.pyodide_packages(lock, ["a"], site.PackageSource(str(folder)), tmp_path / "c")
    assert re.fullmatch(
        f"Pyodide package a-1.0-py3-none-any.whl: sha256 {digest(b'a tampered a')} is not "
        f"the pinned {digest(b'the real a')}; the file was removed",
        str(e.value),
    )
    assert not (tmp_path / "c" / "pyodide-0.27.7" / "a-1.0-py3-none-any.whl").exists()


def test_a_missing_package_file_names_the_file_and_the_source(tmp_path):
    lock = lock_of({"a": b"a"})
    with pytest.raises(site.SiteError, match=r"a-1\.0-py3-none-any\.whl: not found in .*empty"):
        (tmp_path / "empty").mkdir()
        site.pyodide_packages(lock, ["a"], site.PackageSource(str(tmp_path / "empty")), tmp_path)


def test_the_wheel_gets_the_wasm_graphviz_listed_in_its_record(tmp_path):
    wheel = tmp_path / "tinygrad_edu-0.1.0-py3-none-any.whl"
    record = "tinygrad_edu-0.1.0.dist-info/RECORD"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("tinygrad_edu/__init__.py", "x = 1\n")
        z.writestr(record, "tinygrad_edu/__init__.py,sha256=abc,6\n" + record + ",,\n")
    js = b"export class Graphviz {}"
    site.add_to_wheel(wheel, tmp_path / "out.whl", site.WASM_JS, js)
    with zipfile.ZipFile(tmp_path / "out.whl") as z:
        assert z.read("tinygrad_edu/render/graphviz_wasm.js") == js
        assert z.read("tinygrad_edu/__init__.py") == b"x = 1\n"
        line = z.read(record).decode().splitlines()[-1]
    hashed = base64.urlsafe_b64encode(hashlib.sha256(js).digest()).rstrip(b"=").decode()
    assert line == f"tinygrad_edu/render/graphviz_wasm.js,sha256={hashed},{len(js)}"
    assert site.WASM_JS.endswith("/".join(("render", "graphviz_wasm.js")))


def test_lock_entries_let_import_load_the_wheel_without_pip(tmp_path):
    wheel = tmp_path / "typing_extensions-4.15.0-py3-none-any.whl"
    wheel.write_bytes(b"w")
    entry = site.lock_entry("typing-extensions", wheel, [])
    assert entry == {
        "name": "typing-extensions",
        "version": "4.15.0",
        "file_name": wheel.name,
        "install_dir": "site",
        "sha256": digest(b"w"),
        "package_type": "package",
        "imports": ["typing_extensions"],
        "depends": [],
        "unvendored_tests": False,
    }


def test_the_pins_name_files_of_the_pinned_versions():
    for name, (file, sha, depends) in site.PINS["kernel_wheels"].items():
        assert site._key(file.split("-")[0]) == name and file.endswith("-py3-none-any.whl")
        assert re.fullmatch("[0-9a-f]{64}", sha)
        assert all(site._key(d) == d for d in depends)
    pyodide = site.PINS["pyodide"]
    assert pyodide["npm"] == f"pyodide@{pyodide['version']}"
    assert (
        pyodide["official_packages"].startswith("https://")
        and pyodide["version"] in pyodide["official_packages"]
    )
    assert "numpy" in pyodide["roots"] and "micropip" in pyodide["roots"]


def test_page_extensions_pinned_as_wheels_are_ones_the_site_uses():
    for name, (file, sha) in site.PINS["page_extension_wheels"].items():
        assert name in site.PAGE_EXTENSIONS and file.endswith("-py3-none-any.whl")
        assert re.fullmatch("[0-9a-f]{64}", sha)


def _wheel_with(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def test_a_page_extension_comes_out_of_the_wheels_data_folder_without_source_maps(tmp_path):
    ext = "w-1.0.data/data/share/jupyter/labextensions/@s/ext/"
    wheel = _wheel_with(
        tmp_path / "w-1.0-py3-none-any.whl",
        {
            ext + "package.json": b'{"name": "@s/ext"}',
            ext + "static/remoteEntry.1.js": b"entry",
            ext + "static/1.js.map": b"map",
            "w-1.0.data/data/share/jupyter/labextensions/@s/other/package.json": b"other",
            "w/labextensions/@s/ext/not_data.js": b"a copy outside the data folder",
        },
    )
    got = site.labextension_from_wheel(wheel, "@s/ext", tmp_path / "out")
    assert got == tmp_path / "out" / "@s" / "ext"
    files = sorted(p.relative_to(got).as_posix() for p in got.rglob("*") if p.is_file())
    assert files == ["package.json", "static/remoteEntry.1.js"]
    assert (got / "static" / "remoteEntry.1.js").read_bytes() == b"entry"
    assert not (tmp_path / "out" / "@s" / "other").exists()


def test_a_wheel_without_the_page_extension_names_the_wheel_and_the_extension(tmp_path):
    wheel = _wheel_with(tmp_path / "w-1.0-py3-none-any.whl", {"w/__init__.py": b""})
    with pytest.raises(site.SiteError, match=r"w-1.0-py3-none-any.whl: no page extension @s/ext"):
        site.labextension_from_wheel(wheel, "@s/ext", tmp_path / "out")


def test_the_site_keeps_pypi_off_and_exposes_the_app_for_the_browser_tests():
    data = site.lite_config()["jupyter-config-data"]
    kernel = data["litePluginSettings"][site.KERNEL_PLUGIN]
    assert kernel["disablePyPIFallback"] is True
    assert data["exposeAppInBrowser"] is True
    json.dumps(data)
    # the packages Pyodide loads at start, instead of the kernel's one-by-one installs:
    # all of them in the site's lock (a name it lacks would stop every kernel's start)
    started = kernel["loadPyodideOptions"]["packages"]
    in_lock = {*site.PINS["pyodide"]["roots"], *site.PINS["kernel_wheels"], *site.KERNEL_OWN}
    in_lock.add(site.BYTECODE_KERNEL)  # the kernel's bytecode, added by the build
    assert {site._key(n) for n in started} <= {site._key(n) for n in in_lock}
    # each under the name the kernel looks for before it installs it itself
    assert {"ipython", "comm", "jedi", "piplite", "pyodide_kernel"} <= set(started)


def test_the_kernels_own_wheels_get_lock_entries_from_the_installed_kernel():
    pytest.importorskip("jupyterlite_pyodide_kernel")
    wheels = site.kernel_own_wheels()
    assert sorted(wheels) == ["ipykernel", "piplite", "pyodide-kernel"]
    assert wheels["piplite"][0].name.startswith("piplite-0.6.1-")  # the [site] pin
    assert wheels["pyodide-kernel"][0].name.startswith("pyodide_kernel-0.6.1-")


def _installed_kernel_extension(tmp_path: Path) -> Path:
    """A copy of the installed Pyodide kernel's page extension (the site's is built from it)."""
    pytest.importorskip("jupyterlite_pyodide_kernel")
    from jupyter_core.paths import jupyter_path

    name = "@jupyterlite/pyodide-kernel-extension"
    found = [Path(p) / name for p in jupyter_path("labextensions") if (Path(p) / name).is_dir()]
    assert found, name
    return shutil.copytree(found[0], tmp_path / "ext")


def test_the_kernels_start_imports_before_it_moves_into_the_learners_files(tmp_path):
    ext = _installed_kernel_extension(tmp_path)
    before = {js.name: js.read_text() for js in (ext / "static").glob("*.js")}
    site.kernel_imports_off_the_drive(ext)
    workers = 0
    for js in (ext / "static").glob("*.js"):
        text = js.read_text()
        if "initFilesystem" not in text:
            assert text == before[js.name]
            continue
        workers += 1
        assert site.DRIVE_MOUNT.search(before[js.name]) and not site.DRIVE_MOUNT.search(text)
        # every kernel start moves into /drive after `import pyodide_kernel`, the last import
        starts = re.findall(r'i\.push\("import pyodide_kernel"\)(.{0,120})', text)
        assert starts and len(starts) == text.count("async initKernel(")
        assert all('os.chdir("/drive/${this._localPath||""}")' in s for s in starts), starts
    assert workers >= 1


def test_a_kernel_worker_the_build_does_not_know_stops_the_build(tmp_path):
    ext = _installed_kernel_extension(tmp_path)
    site.kernel_imports_off_the_drive(ext)
    with pytest.raises(
        site.SiteError, match=r"not the one this build knows \(moves into /drive: 0"
    ):
        site.kernel_imports_off_the_drive(ext)  # rewritten already: nothing it knows is left


def test_build_refuses_a_folder_that_is_not_a_site(tmp_path, capsys):
    out = tmp_path / "homework"
    out.mkdir()
    (out / "essay.txt").write_text("mine")
    assert main(["site", "build", str(out), "--cache", str(tmp_path / "cache")]) == 1
    assert capsys.readouterr().err == (
        f"site build: {out}: a folder that is not a site already; give an empty or new one\n"
    )
    assert (out / "essay.txt").read_text() == "mine"


def test_a_relative_cache_folder_still_gives_the_build_absolute_paths(tmp_path, monkeypatch):
    # `--cache build/lite-cache` once wrote a site with no Pyodide and no error: the
    # source folder inside the cache was named relative to a cwd the build changes
    seen = []
    monkeypatch.setattr(site, "pyodide_folder", lambda folder, *a: seen.append(folder))
    monkeypatch.setattr(site, "jupyter_lite_build", lambda lite, out, cache: seen.append(lite))
    monkeypatch.chdir(tmp_path)
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01_a.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    site.build_site(Path("out"), lessons, tmp_path, Path("cache"), "unused", say=lambda m: None)
    assert len(seen) == 2 and all(p.is_absolute() for p in seen), seen


def test_package_files_come_from_a_base_url_too(tmp_path):
    """The default source is Pyodide's release URL: the same fetch, served here on 127.0.0.1."""
    import functools
    import http.server
    import threading

    files = {"a": b"wheel a", "b": b"wheel b"}
    (tmp_path / "full").mkdir()
    for name, data in files.items():
        (tmp_path / "full" / f"{name}-1.0-py3-none-any.whl").write_bytes(data)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        source = site.PackageSource(base + "/full/")
        got = site.pyodide_packages(lock_of(files), ["b", "a"], source, tmp_path / "c")
        assert [p.read_bytes() for p in got] == [b"wheel b", b"wheel a"]
        with pytest.raises(
            site.SiteError, match=r"a-1\.0-py3-none-any\.whl: not found in http.*404"
        ):
            lock = lock_of({"a": b"another a"})  # not the cached one: fetched again
            site.pyodide_packages(lock, ["a"], site.PackageSource(base + "/none/"), tmp_path / "c")
    finally:
        server.shutdown()
        server.server_close()


def test_a_bytecode_wheel_holds_checked_hash_pycs_at_their_paths_and_lists_them(tmp_path):
    """The bytecode wheels (site_bytecode.py): each .pyc where Python looks for it beside
    its module, checked against the source's hash at import (a stale one is not run)."""
    import importlib.util
    import py_compile

    from tinygrad_edu.lesson import site_bytecode

    source = tmp_path / "site" / "pkg" / "mod.py"
    source.parent.mkdir(parents=True)
    source.write_text("x = 1\n")
    out = tmp_path / "out"
    pyc = out / Path(importlib.util.cache_from_source(str(source))).relative_to(tmp_path / "site")
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    py_compile.compile(str(source), cfile=str(pyc), doraise=True, invalidation_mode=mode)
    (tmp_path / "dest").mkdir()
    wheel = site_bytecode.bytecode_wheel(out, "tg-pyc", "0.1.0", tmp_path / "dest")
    assert wheel.name == "tg_pyc-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        name = pyc.relative_to(out).as_posix()
        assert name.startswith("pkg/__pycache__/mod.") and name.endswith(".pyc")
        data = z.read(name)
        assert int.from_bytes(data[4:8], "little") == 0b11  # hash-based, checked
        record = z.read("tg_pyc-0.1.0.dist-info/RECORD").decode()
        hashed = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert f"{name},sha256={hashed},{len(data)}" in record.splitlines()
        assert z.getinfo(name).compress_type == zipfile.ZIP_DEFLATED
    # the same bytecode gives the same wheel, byte for byte
    again = site_bytecode.bytecode_wheel(out, "tg-pyc", "0.1.0", tmp_path)
    assert again.read_bytes() == wheel.read_bytes()
