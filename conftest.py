"""How the whole suite runs: on every CPU, with the tests that share a process kept together.

`python -m pytest` with no paths (README's command, and so CI's) runs on pytest-xdist
workers, one per logical CPU and at most 8 (`-n logical --maxprocesses 8 --dist loadgroup`;
PYTEST_XDIST_AUTO_NUM_WORKERS sets the number). Naming paths runs plain pytest in one
process (what `tinygrad-edu lesson check` and the tests that start pytest themselves do),
and so do `-n 0` and `-p no:xdist`; `-n N` with paths distributes them the same way.

Each test goes to whichever worker is free, except that a worker takes a whole file when
its tests share something: a lesson notebook (nbval runs its cells in order in one kernel)
and a file whose tests use a module- or class-scoped fixture (a notebook run once by
nbclient, a browser page) stay together. Session fixtures (the e2e suite's JupyterLab
server and Chromium, `playwright_api`) are made once per worker. xdist starts the biggest
groups first; the rest keep their order (the browser tests last: tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.abspath(__file__))


def _lesson_kernel_env() -> dict:
    """`tinygrad_edu.lesson.execute.kernel_env()`, read from the file alone: importing the
    package would start numpy (and its BLAS threads) before the variables are set."""
    path = os.path.join(ROOT, "tinygrad_edu", "lesson", "execute.py")
    spec = importlib.util.spec_from_file_location("_lesson_execute", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # standard library only at import time
    return module.kernel_env()


# One BLAS thread in every process the tests start (nbval's kernels, `lesson run`), as
# `tinygrad-edu lesson run` and Binder give lessons: with two workers on two cores, a
# multi-threaded matmul in one kernel waits for threads the other worker's kernel holds,
# and a lesson's timing cells (8b) measure that instead of what they compare
os.environ.update(_lesson_kernel_env())

SHARED_SCOPES = ("class", "module", "package")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The whole suite (no paths given) on one worker per CPU, unless -n or -p no:xdist
    says otherwise, or a debugger needs the test in this process."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    debugging = config.option.usepdb or config.option.trace or config.option.collectonly
    if whole_suite and not debugging and config.option.numprocesses is None:
        config.option.numprocesses = "logical"  # "auto" counts physical cores: 1 on many VMs
        config.option.maxprocesses = config.option.maxprocesses or 8
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadgroup"


def _shares_its_file(item: pytest.Item) -> bool:
    if not isinstance(item, pytest.Function) and not hasattr(item, "dtest"):
        return True  # a notebook cell (nbval): the cells before it ran in the same kernel
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d[-1].scope in SHARED_SCOPES for d in defs if d)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """(xdist, in the controller) Tell each worker that tests are sent by group: a worker
    parses only the command line, which may not say so (see pytest_cmdline_main)."""
    node.workerinput["tinygrad_edu_loadgroup"] = node.config.option.dist == "loadgroup"


# A wrapper, not tryfirst: the part before `yield` runs before every plain implementation,
# xdist's included, whatever order a pytest version calls tryfirst hooks in (pytest 9.2
# called xdist's first, so the groups were never read and a lesson's cells were split up)
@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    workerinput = getattr(config, "workerinput", None)
    if workerinput and workerinput.get("tinygrad_edu_loadgroup"):
        config.option.loadgroup = True
        for item in items:
            if _shares_its_file(item) and not any(True for _ in item.iter_markers("xdist_group")):
                item.add_marker(pytest.mark.xdist_group(os.path.relpath(str(item.path), ROOT)))
    return (yield)


def pytest_report_header(config):
    """Which of numpy's SIMD paths this run takes: they sum float32 in different orders, so
    a lesson output that depends on them passes on one CPU and fails on another (CI runs
    the lessons on the fastest paths and again on the baseline: .ci/run)."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

    dispatched = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "")
    return (
        f"numpy SIMD: baseline {' '.join(__cpu_baseline__)}, dispatched "
        f"{' '.join(dispatched) or 'none'}"
        + (f" (NPY_DISABLE_CPU_FEATURES={disabled})" if disabled else "")
    )
