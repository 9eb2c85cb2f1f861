"""Write tinygrad_edu/core/op_methods.pyi: the methods core/ops installs on Tensor, declared
for type checkers.

The op packages (core/ops/arith, indexing, search, products) hold PyTorch's methods in
`METHODS` dicts, and tensor.py sets each one on `Tensor` when it is imported. A type checker
never runs that loop, so without declarations an IDE would say `x.remainder` does not
exist. This script reads the dicts and writes one declaration per method (its parameters
as the function spells them; it returns a Tensor, or the named tuple PyTorch returns).
tests/core/test_types.py checks the file is what this script writes today:

    python scripts/op_method_stubs.py            # rewrite the file
    python scripts/op_method_stubs.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

from tinygrad_edu.core.tensor import TORCH_OP_MODULES

TARGET = Path(__file__).resolve().parents[1] / "tinygrad_edu" / "core" / "op_methods.pyi"
# what PyTorch returns where it is not one tensor
RETURNS = {
    "sort": "ValuesIndices",
    "kthvalue": "ValuesIndices",
    "mode": "ValuesIndices",
    "median": "Any",  # a tensor, or (values, indices) when a dim is given
    "nonzero": "Any",  # a tensor, or a tuple of them with as_tuple=True
}
# in-place methods whose out-of-place op has another name
IN_PLACE_OF = {"clip_": "clamp", "__imod__": "remainder", "__ifloordiv__": "floor_divide"}
HEADER = '''"""The methods core/ops installs on `Tensor` (its `METHODS` dicts), declared for type
checkers: written by scripts/op_method_stubs.py, never imported at run time.

tensor.py sets these methods on `Tensor` in a loop that a type checker does not run;
`TorchMethods` inherits this class only while type checking, so an IDE completes
`x.remainder(...)` and knows it gives a Tensor. Do not edit: rerun the script.
"""

# ruff: noqa: A002 - PyTorch's parameter names (min, max)
from __future__ import annotations

from typing import Any

from .tensor import Tensor
from .torch_api import ValuesIndices


class OpMethods:
'''


def _parameters(fn: object) -> str:
    """The function's parameters after `self`, spelled as its source spells them."""
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    params = list(sig.parameters.values())[1:]
    shown = []
    for p in params:
        annotation = p.annotation if p.annotation is not inspect.Parameter.empty else "Any"
        star = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        text = f"{star}{p.name}: {annotation}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}"
        shown.append(text)
    # keyword-only parameters need a bare `*` before them when no *args is there
    kinds = [p.kind for p in params]
    if p_kw := [i for i, k in enumerate(kinds) if k == inspect.Parameter.KEYWORD_ONLY]:
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            shown.insert(p_kw[0], "*")
    return ", ".join(["self", *shown])


def source() -> str:
    methods = {}
    for module in TORCH_OP_MODULES:
        methods.update(module.METHODS)
    lines = []
    for name, fn in sorted(methods.items()):
        # an in-place method takes what its out-of-place op takes (it wraps it generically)
        plain = methods.get(IN_PLACE_OF.get(name, name[:-1]) if name.endswith("_") else "")
        params = _parameters(plain if plain is not None else fn)
        returns = RETURNS.get(name, "Tensor")
        lines.append(f"    def {name}({params}) -> {returns}: ...")
    text = HEADER + "\n".join(lines) + "\n"
    # formatted as the house formats code (ruff, the dev extra's), so `ruff format` keeps it
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def main() -> int:
    text = source()
    if "--check" in sys.argv[1:]:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run python scripts/op_method_stubs.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({text.count('def ')} methods)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
