"""Save and load: a program as human-readable JSON plus .npz (the arrays), one format.

`g.save("model")` writes `model.json` and `model.npz`; `tg.static.load("model")`
rebuilds a StaticGraph that runs without the original Python code. The format:

    {"format": "tinygrad_edu.static", "version": 1, "name": "f", "structure": "single",
     "program": {"inputs": [1], "outputs": [3],
                 "vars": [{"id": 1, "name": "x", "shape": [3], "dtype": "float64"}, ...],
                 "consts": [{"id": 2, "array": "a0"}],
                 "eqns": [{"op": "Mul", "in": [1, 2], "out": [3], "attrs": {},
                           "site": "cell [2], line 1: y = x * 2", "subs": {}}]}}

An `ExportedProgram` (tg.static.export) is the same document with a `dims` section, and
loads as one: `"dims": {"inputs": [{"0": ["batch", 2, 1024]}], "sizes": [[100], [101]],
"program": {...}}`, the Dim of each dynamic dimension of each input, the two sizes the
function was traced at, and the program at the second size (null when no dim is
dynamic). Every array is stored once, however often the programs use it.

Ops are names looked up in `core.function.OPS` (plus `cond`, `while_loop`, `vjp`);
attribute values are JSON numbers, strings, booleans, null and lists (tuples), or
`{"dtype": name}`, `{"slice": [start, stop, step]}`, `{"ellipsis": true}` and
`{"array": key}` (an index array in the .npz). Loading never unpickles and never
evaluates text: it parses JSON, checks every field, op, reference, dtype and shape,
and rejects anything else with a `FormatError` saying what and where.

Limits, checked before anything large is allocated: each .npz member's shape and
dtype are read from its .npy header, and all arrays together may hold at most
`MAX_ARRAY_BYTES` (256 MiB; a small compressed file cannot expand past it), each
variable at most `MAX_ELEMENTS` values, the JSON at most `MAX_JSON_BYTES`, nesting at
most `MAX_DEPTH` levels. Every declared type is checked against what the program
computes (each op runs once on zeros of its declared input types; all of a program's
values together at most `MAX_CHECK_BYTES`). Names are read in NFKC form (as Python reads identifiers),
and two different names that become one (`ｘ` and `x`) are rejected.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import inspect
import json
import os
import unicodedata
from typing import Any

import numpy as np

from ..core.errors import message
from ..core.function import OPS
from .exported import Dim, ExportedProgram, _dim_sizes, _symbols
from .ir import MAX_CHECK_BYTES, STRUCTURED, ZERO, Eqn, Program, Var, check_types
from .npz import DTYPES, MAX_ARRAY_BYTES, MAX_ARRAYS, MAX_ELEMENTS, NpzError, read_npz
from .program import StaticGraph
from .symbolic import _NotSymbolicError, _Substitute

__all__ = [
    "FormatError",
    "load",
    "save",
    "read_npz",
    "DTYPES",
    "MAX_ARRAY_BYTES",
    "MAX_ARRAYS",
    "MAX_ELEMENTS",
    "MAX_DEPTH",
    "MAX_JSON_BYTES",
    "MAX_CHECK_BYTES",
]

FORMAT, VERSION = "tinygrad_edu.static", 1
MAX_DEPTH = 32  # sub-programs (and attribute lists) nested deeper than this are rejected
MAX_JSON_BYTES = 64 * 2**20


class FormatError(ValueError):
    """A saved static graph is malformed, unsafe or uses an unknown op."""


def _paths(path: Any) -> tuple[str, str]:
    path = os.fspath(path)
    base = path[:-5] if path.endswith(".json") else path
    return base + ".json", base + ".npz"


# --- saving ---------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.seen: dict = {}  # (dtype, shape, bytes) -> key: each array stored once

    def array(self, arr: np.ndarray) -> str:
        arr = np.array(arr, order="C")  # (ascontiguousarray makes 0-d 1-d)
        seen = (arr.dtype.str, arr.shape, arr.tobytes())
        if seen not in self.seen:
            self.seen[seen] = key = f"a{len(self.arrays)}"
            self.arrays[key] = arr
        return self.seen[seen]

    def attr(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, np.integer)):
            return int(v)
        if isinstance(v, (float, np.floating)):
            return float(v)
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            return {"dtype": np.dtype(v).name}
        if isinstance(v, slice):
            return {"slice": [self.attr(v.start), self.attr(v.stop), self.attr(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if isinstance(v, np.ndarray):
            return {"array": self.array(v)}
        if isinstance(v, (tuple, list)):
            return [self.attr(x) for x in v]
        raise FormatError(
            message("save", f"cannot store an attribute of type {type(v).__name__} ({v!r})")
        )

    def program(self, p: Program) -> dict:
        eqns = []
        for e in p.eqns:
            if e.fn is not None and OPS.get(e.fn.__name__) is not e.fn:
                raise FormatError(
                    message(
                        "save",
                        f"op {e.fn.__name__!r} is a Function defined outside tinygrad_edu, "
                        "so a loaded graph could not run it",
                        e.site,
                        "export only graphs built from the built-in ops",
                    )
                )
            eqns.append(
                {
                    "op": e.op,
                    "in": list(e.ins),
                    "out": list(e.outs),
                    "attrs": {k: self.attr(v) for k, v in e.attrs.items()},
                    "site": e.site,
                    "subs": {k: self.program(s) for k, s in e.subs.items()},
                }
            )
        return {
            "inputs": list(p.inputs),
            "outputs": list(p.outputs),
            "vars": [
                {"id": v.id, "name": v.name, "shape": list(v.shape), "dtype": v.dtype.name}
                for v in p.vars.values()
            ],
            "consts": [{"id": k, "array": self.array(a)} for k, a in p.consts.items()],
            "eqns": eqns,
        }


def save(graph: Any, path: str) -> None:
    """Write `graph` (a StaticGraph or an ExportedProgram) to `path` (.json) and the arrays
    beside it (.npz); see the module doc."""
    w = _Writer()
    exported = isinstance(graph, ExportedProgram)
    g = graph.graph if exported else graph
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": g.name,
        "structure": g.structure,
        "program": w.program(g.program),
    }
    if exported:  # the Dims, the two sizes traced, and the program at the second
        doc["dims"] = {
            "inputs": [
                {str(d): [dim.name, dim.min, dim.max] for d, dim in dims.items()}
                for dims in graph._spec
            ],
            "sizes": [list(graph._a), list(graph._b)],
            "program": None if graph._graph_b is None else w.program(graph._graph_b.program),
        }
    jpath, npath = _paths(path)
    with open(jpath, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    np.savez(npath, **w.arrays)  # type: ignore[arg-type]  # numpy's stub: kwds typed as allow_pickle


# --- loading --------------------------------------------------------------------------


def _fail(where: str, what: str) -> FormatError:
    return FormatError(
        message("load", f"{where}: {what}", None, "only load files written by StaticGraph.save")
    )


class _Reader:
    def __init__(self, arrays: Any, jpath: str) -> None:
        self.arrays = arrays
        self.jpath = jpath

    def array(self, key: Any, where: str) -> np.ndarray:
        if not isinstance(key, str) or key not in self.arrays:
            raise _fail(where, f"refers to array {key!r}, which is not in the .npz file")
        arr = self.arrays[key]
        if isinstance(arr, str):  # an array that was not read: why (see read_npz)
            raise _fail(where, f"array {key!r} {arr}")
        return arr

    def shape(self, s: Any, where: str) -> tuple:
        if not isinstance(s, list) or not all(type(d) is int and d >= 0 for d in s):
            raise _fail(where, f"a shape must be a list of non-negative integers, got {s!r}")
        size = 1
        for d in s:
            size *= d
        if size > MAX_ELEMENTS:
            raise _fail(
                where,
                f"shape {tuple(s)!r} has {size} elements, more than the {MAX_ELEMENTS} allowed",
            )
        return tuple(s)

    def name(self, name: Any, where: str, seen: dict) -> str | None:
        """A variable's name in NFKC form; two names that become one are rejected."""
        if name is None:
            return None
        if not isinstance(name, str) or len(name) > 200:
            raise _fail(where, "name must be a string (at most 200 characters) or null")
        norm = unicodedata.normalize("NFKC", name)
        other = seen.setdefault(norm, name)
        if other != name:
            raise _fail(
                where,
                f"names {other!r} and {name!r} are the same name once "
                "normalised (NFKC), as Python reads identifiers",
            )
        return norm

    def attr(self, v: Any, where: str, depth: int = 0) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            if depth > MAX_DEPTH:
                raise _fail(where, f"attribute lists nested deeper than {MAX_DEPTH}")
            return tuple(self.attr(x, where, depth + 1) for x in v)
        if isinstance(v, dict) and len(v) == 1:
            ((k, x),) = v.items()
            if k == "dtype" and x in DTYPES:
                return np.dtype(x)
            if (
                k == "slice"
                and isinstance(x, list)
                and len(x) == 3
                and all(p is None or type(p) is int for p in x)
            ):
                return slice(*x)
            if k == "ellipsis" and x is True:
                return Ellipsis
            if k == "array":
                return self.array(x, where)
        raise _fail(where, f"unsupported attribute value {v!r}")

    def program(self, d: Any, where: str, depth: int = 0, tape: dict | None = None) -> Program:
        """Read one program; `tape` holds the forward equations its vjp lines may read."""
        if depth > MAX_DEPTH:
            raise _fail(where, f"sub-programs nested deeper than {MAX_DEPTH}")
        keys = {"inputs", "outputs", "vars", "consts", "eqns"}
        if not isinstance(d, dict) or set(d) != keys:
            raise _fail(where, f"a program must be an object with exactly the keys {sorted(keys)}")
        vars_ = self.variables(d["vars"], f"{where}.vars")
        defined: set[int] = set()

        def declare(vid: Any, w: str) -> int:
            if type(vid) is not int or vid not in vars_:
                raise _fail(w, f"{vid!r} is not a declared variable")
            if vid in defined:
                raise _fail(w, f"variable {vid} is defined twice")
            defined.add(vid)
            return vid

        inputs = [declare(v, f"{where}.inputs") for v in _list(d["inputs"], f"{where}.inputs")]
        consts = self.consts(d["consts"], f"{where}.consts", vars_, declare)
        eqns = []
        firsts: dict[int, Eqn] = dict(tape or {})
        for i, e in enumerate(_list(d["eqns"], f"{where}.eqns")):
            eqns.append(self.eqn(e, f"{where}.eqns[{i}]", vars_, defined, declare, firsts, depth))
        outputs = _list(d["outputs"], f"{where}.outputs")
        for o in outputs:
            if type(o) is not int or o not in defined:
                raise _fail(f"{where}.outputs", f"{o!r} is not computed by the program")
        program = Program(inputs, list(outputs), consts, eqns, vars_)
        check_types(program, where, _fail)
        return program

    def variables(self, d: Any, where: str) -> dict[int, Var]:
        """The declared variables by id: each a new positive id, a shape, a dtype, a name."""
        vars_: dict[int, Var] = {}
        seen_names: dict[str, str] = {}  # NFKC form -> the name as written
        for i, v in enumerate(_list(d, where)):
            w = f"{where}[{i}]"
            if not isinstance(v, dict) or set(v) != {"id", "name", "shape", "dtype"}:
                raise _fail(w, "a variable needs exactly id, name, shape and dtype")
            if type(v["id"]) is not int or v["id"] <= 0 or v["id"] in vars_:
                raise _fail(w, f"id must be a new positive integer, got {v['id']!r}")
            if not isinstance(v["dtype"], str) or v["dtype"] not in DTYPES:
                raise _fail(w, f"unsupported dtype {v['dtype']!r}")
            vars_[v["id"]] = Var(
                v["id"],
                self.shape(v["shape"], w),
                np.dtype(v["dtype"]),
                self.name(v["name"], w, seen_names),
            )
        return vars_

    def consts(self, d: Any, where: str, vars_: dict, declare: Any) -> dict[int, np.ndarray]:
        """The constants by id, each array of its variable's declared shape and dtype."""
        consts = {}
        for i, c in enumerate(_list(d, where)):
            w = f"{where}[{i}]"
            if not isinstance(c, dict) or set(c) != {"id", "array"}:
                raise _fail(w, "a constant needs exactly id and array")
            vid = declare(c["id"], w)
            arr = self.array(c["array"], w)
            v = vars_[vid]
            if arr.shape != v.shape or arr.dtype != v.dtype:
                raise _fail(
                    w,
                    f"array has {arr.dtype.name}{list(arr.shape)}, the variable "
                    f"says {v.type_text()}",
                )
            consts[vid] = arr
        return consts

    def eqn(
        self, e: Any, w: str, vars_: dict, defined: set, declare: Any, firsts: dict, depth: int
    ) -> Eqn:
        if not isinstance(e, dict) or set(e) != {"op", "in", "out", "attrs", "site", "subs"}:
            raise _fail(w, "an equation needs exactly op, in, out, attrs, site and subs")
        op = e["op"]
        if not isinstance(op, str) or (op not in OPS and op not in STRUCTURED):
            raise _fail(
                w,
                f"unknown op {op!r}; known ops are the built-in ones "
                f"({', '.join(sorted(OPS))}) and {', '.join(STRUCTURED)}",
            )
        if not isinstance(e["attrs"], dict):
            raise _fail(w, "attrs must be an object")
        attrs = {str(k): self.attr(v, f"{w}.attrs.{k}") for k, v in e["attrs"].items()}
        ins = _list(e["in"], f"{w}.in")
        for i in ins:
            ok = type(i) is int and (i in defined or (op == "vjp" and i == ZERO))
            if not ok:
                raise _fail(w, f"input {i!r} is used before it is computed (or never declared)")
        outs = tuple(declare(o, f"{w}.out") for o in _list(e["out"], f"{w}.out"))
        if e["site"] is not None and not isinstance(e["site"], str):
            raise _fail(w, "site must be a string or null")
        if not isinstance(e["subs"], dict):
            raise _fail(w, "subs must be an object")
        subs = {}
        for k, s in e["subs"].items():
            tape = None
            if op == "vjp" and attrs.get("of") in firsts and str(k).endswith("_grad"):
                fwd = firsts[attrs["of"]].subs.get(str(k)[:-5])  # true_grad reads true's tape
                tape = {x.outs[0]: x for x in fwd.eqns if x.outs} if fwd is not None else None
            subs[str(k)] = self.program(s, f"{w}.subs.{k}", depth + 1, tape)
        fn = OPS.get(op)
        if op == "vjp":
            fn = self._check_vjp(attrs, ins, outs, subs, w, firsts)
        elif op in STRUCTURED:
            self._check_structured(op, attrs, ins, outs, subs, w)
        else:
            self._check_op(fn, attrs, ins, outs, subs, w)
        eqn = Eqn(op, tuple(ins), outs, attrs, e["site"], fn, subs)
        if outs:
            firsts[outs[0]] = eqn
        return eqn

    def _check_op(self, fn: Any, attrs: dict, ins: list, outs: tuple, subs: dict, w: str) -> None:
        params = list(inspect.signature(fn.forward).parameters.values())[1:]  # drop ctx
        varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
        positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        names = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
        n_required = sum(1 for p in positional if p.default is p.empty) - len(
            [k for k in attrs if k in {p.name for p in positional}]
        )
        if not varargs and not (n_required <= len(ins) <= len(positional)):
            raise _fail(w, f"{fn.__name__} takes {n_required} input(s), got {len(ins)}")
        for k, v in attrs.items():
            if k not in names:
                raise _fail(w, f"{fn.__name__} has no attribute {k!r}")
            if k == "shape":
                if not isinstance(v, tuple) or not all(type(s) is int and s >= -1 for s in v):
                    raise _fail(w, f"shape must be a list of integers, got {v!r}")
                self.shape([s for s in v if s != -1], w)
        if len(outs) != 1 or subs:
            raise _fail(w, f"{fn.__name__} has exactly one output and no sub-programs")

    def _check_structured(
        self, op: str, attrs: dict, ins: list, outs: tuple, subs: dict, w: str
    ) -> None:
        if op == "cond":
            if set(subs) != {"true", "false"} or attrs:
                raise _fail(w, "cond needs sub-programs true and false, and no attributes")
            for s in subs.values():
                if len(s.inputs) != len(ins) - 1 or len(s.outputs) != len(outs):
                    raise _fail(w, "a cond branch does not match the equation's inputs/outputs")
        else:
            n, limit = attrs.get("n_carry"), attrs.get("max_iterations", 0)
            if type(limit) is not int or limit < 0:
                raise _fail(w, f"max_iterations must be a non-negative integer, got {limit!r}")
            if (
                set(subs) != {"cond", "body"}
                or not {"n_carry"} <= set(attrs) <= {"n_carry", "max_iterations"}
                or type(n) is not int
                or not 0 < n <= len(ins)
                or len(outs) != n
            ):
                raise _fail(w, "while_loop needs sub-programs cond and body and n_carry")
            if (
                len(subs["body"].inputs) != len(ins)
                or len(subs["body"].outputs) != n
                or len(subs["cond"].inputs) != len(ins)
                or len(subs["cond"].outputs) != 1
            ):
                raise _fail(w, "the while_loop body/cond do not match the carry")

    def _check_vjp(
        self, attrs: dict, ins: list, outs: tuple, subs: dict, w: str, firsts: dict
    ) -> Any:
        need = {"of", "op", "needs", "_in_types", "_out_types"}
        if not need <= set(attrs):
            raise _fail(w, f"vjp needs the attributes {sorted(need)}")
        if attrs["of"] not in firsts:
            raise _fail(w, f"vjp refers to {attrs['of']!r}, which is not an earlier equation")
        fwd = attrs["op"]
        if firsts[attrs["of"]].op != fwd:
            raise _fail(
                w,
                f"vjp says its forward op is {fwd!r}, but line {attrs['of']} is "
                f"{firsts[attrs['of']].op!r}",
            )
        if fwd not in OPS and fwd not in ("cond", "while_loop"):
            raise _fail(w, f"vjp of unknown op {fwd!r}")
        needs = attrs["needs"]
        if (
            not isinstance(needs, tuple)
            or not all(isinstance(n, bool) for n in needs)
            or len(needs) != len(attrs["_in_types"])
            or sum(needs) != len(outs)
        ):
            raise _fail(w, "vjp needs one boolean per forward input and one output per True")
        for s, dt in attrs["_in_types"] + attrs["_out_types"]:
            if not isinstance(dt, np.dtype):
                raise _fail(w, "vjp types must be (shape, dtype) pairs")
            self.shape(list(s), w)
        if len(ins) != len(attrs["_out_types"]):
            raise _fail(w, "vjp needs one cotangent per forward output")
        expected = {"cond": {"true_grad", "false_grad"}, "while_loop": {"body_grad"}}.get(
            fwd, set()
        )
        if set(subs) != expected:
            raise _fail(w, f"vjp of {fwd} needs sub-programs {sorted(expected)}")
        if fwd == "while_loop" and not (
            {"_float_ins", "n_carry"} <= set(attrs) and type(attrs["n_carry"]) is int
        ):
            raise _fail(w, "vjp of while_loop needs _float_ins and n_carry")
        return OPS.get(fwd)


def _list(x: Any, where: str) -> list:
    if not isinstance(x, list):
        raise _fail(where, f"expected a list, got {type(x).__name__}")
    return x


def _read_arrays(npath: str) -> dict:
    try:
        return read_npz(npath)
    except NpzError as e:
        raise _fail(npath, str(e)) from None


def _read_json(jpath: str) -> Any:
    """The file's JSON, read with a size cap, or a FormatError saying why it is not JSON."""
    if os.path.getsize(jpath) > MAX_JSON_BYTES:  # (f.read(n) would allocate n bytes first)
        raise _fail(jpath, f"larger than the {MAX_JSON_BYTES} bytes allowed")
    with open(jpath, "rb") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _fail(jpath, f"not valid JSON ({e.msg} at line {e.lineno})") from None
    except UnicodeDecodeError:
        raise _fail(jpath, "not valid JSON (not UTF-8 text)") from None
    except RecursionError:
        raise _fail(jpath, "not valid JSON for this format (nested too deeply)") from None


def _exported(dims: Any, graph: StaticGraph, reader: _Reader, jpath: str) -> ExportedProgram:
    """The `dims` section read onto `graph`: an ExportedProgram, each field checked."""
    if not isinstance(dims, dict) or set(dims) != {"inputs", "sizes", "program"}:
        raise _fail(jpath, "dims needs exactly inputs, sizes and program")
    spec = _spec(dims["inputs"], graph.program, jpath)
    symbols = _symbols(spec)
    if (dims["program"] is None) == bool(symbols):
        raise _fail(jpath, "dims: a second program exactly when a dim is dynamic")
    graph_b = None
    if symbols:
        prog_b = reader.program(dims["program"], "dims.program")
        graph_b = StaticGraph(prog_b, graph.structure, graph.name)
    a, b = _sizes(dims["sizes"], graph, graph_b, spec, symbols, jpath)
    return ExportedProgram(graph, graph_b, a, b, spec, symbols)


def _spec(inputs_doc: Any, program: Program, jpath: str) -> list[dict]:
    """The file's Dims as one `{dim: Dim}` per input; a Dim named twice is one object."""
    inputs = program.inputs
    if not isinstance(inputs_doc, list) or len(inputs_doc) != len(inputs):
        raise _fail(jpath, "dims: one entry per input")
    spec: list[dict[int, Dim]] = []
    by_name: dict[str, Dim] = {}
    for i, entry in enumerate(inputs_doc):
        dims: dict[int, Dim] = {}
        ndim = len(program.vars[inputs[i]].shape)
        for d, triple in (entry if isinstance(entry, dict) else {None: None}).items():
            ok = (
                isinstance(d, str)
                and d.isdigit()
                and int(d) < ndim
                and isinstance(triple, list)
                and len(triple) == 3
                and isinstance(triple[0], str)
                and type(triple[1]) is int
                and (triple[2] is None or (type(triple[2]) is int and triple[1] <= triple[2]))
            )
            if not ok:
                raise _fail(
                    f"{jpath}: dims[{i}]",
                    f"a dim entry must be 'dim': [name, min, max], got {d!r}: {triple!r}",
                )
            assert d is not None and triple is not None  # `ok` checked both
            dim = by_name.get(triple[0])
            if dim is None:
                dim = by_name[triple[0]] = Dim(triple[0], min=triple[1], max=triple[2])
            elif (dim.min, dim.max) != (triple[1], triple[2]):
                raise _fail(f"{jpath}: dims[{i}]", f"Dim {triple[0]!r} has two different ranges")
            dims[int(d)] = dim
        spec.append(dims)
    return spec


def _sizes(
    sizes: Any, graph: StaticGraph, graph_b: Any, spec: list, symbols: list, jpath: str
) -> tuple[tuple, tuple]:
    """The file's two example sizes, checked against the programs' input shapes."""
    if (
        not isinstance(sizes, list)
        or len(sizes) != 2
        or not all(isinstance(s, list) and len(s) == len(symbols) for s in sizes)
        or not all(type(n) is int and n >= 2 for s in sizes for n in s)
    ):
        raise _fail(jpath, "sizes: two lists with one size (at least 2) per Dim")
    a, b = tuple(sizes[0]), tuple(sizes[1])
    if not symbols:
        return a, b
    shapes = lambda g: [g.program.vars[v].shape for v in g.program.inputs]  # noqa: E731
    names = [s.name for s in graph.inputs]

    def bad(text: str) -> None:
        raise _fail(jpath, f"the example sizes do not fit the Dims: {text}")

    if (
        _dim_sizes(spec, symbols, shapes(graph), names, bad) != a
        or _dim_sizes(spec, symbols, shapes(graph_b), names, bad) != b
        or any(x == y for x, y in zip(a, b))
    ):
        raise _fail(jpath, "sizes do not match the programs' input shapes")
    try:
        _Substitute(a, b, a).program(graph.program, graph_b.program)
    except _NotSymbolicError:
        raise _fail(jpath, "the two programs differ in more than their sizes") from None
    return a, b


def _from_export_format(doc: dict, jpath: str) -> dict:
    """A file of the former `tinygrad_edu.export` format, in this one's layout."""
    keys = {"format", "version", "name", "structure", "dims", "sizes", "programs"}
    if (
        set(doc) != keys
        or doc["version"] != 1
        or not isinstance(doc["programs"], list)
        or len(doc["programs"]) not in (1, 2)
    ):
        raise _fail(
            jpath, "an export needs format, version, name, structure, dims, sizes, programs"
        )
    second = doc["programs"][1] if len(doc["programs"]) == 2 else None
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": doc["name"],
        "structure": doc["structure"],
        "program": doc["programs"][0],
        "dims": {"inputs": doc["dims"], "sizes": doc["sizes"], "program": second},
    }


def load(path: str) -> Any:
    r"""Load a StaticGraph saved with `StaticGraph.save` (JSON + .npz; never pickle).

    Rules: `path` may name the .json file or leave the extension off; the .npz must
    sit beside it. Every op must be a built-in one; every reference, dtype and shape
    is checked before anything runs.

    Raises:
        FormatError: a malformed, unsafe or unknown-op file, naming the bad field.
        FileNotFoundError: a missing file.

    Example:
        >>> import os, tempfile, tinygrad_edu as tg
        >>> g = tg.static.trace(lambda x: (x * 3).sum(), tg.tensor([1.0, 2.0]))
        >>> path = os.path.join(tempfile.mkdtemp(), "triple")
        >>> g.save(path)
        >>> tg.static.load(path)(tg.tensor([1.0, 1.0]))
        tensor(6.)
    """
    jpath, npath = _paths(os.fspath(path))
    doc = _read_json(jpath)
    if isinstance(doc, dict) and doc.get("format") == "tinygrad_edu.export":
        doc = _from_export_format(doc, jpath)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _fail(jpath, f'not a {FORMAT} file (the "format" field is missing or different)')
    if doc.get("version") != VERSION:
        raise _fail(
            jpath,
            f"format version {doc.get('version')!r}, this tinygrad_edu reads version {VERSION}",
        )
    if (
        set(doc) - {"dims"} != {"format", "version", "name", "structure", "program"}
        or doc["structure"] not in ("single", "tuple")
        or not isinstance(doc["name"], str)
    ):
        raise _fail(jpath, "the top level needs format, version, name, structure and program")
    reader = _Reader(_read_arrays(npath), jpath)
    try:
        graph = StaticGraph(
            reader.program(doc["program"], "program"), doc["structure"], doc["name"]
        )
        return _exported(doc["dims"], graph, reader, jpath) if "dims" in doc else graph
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        if isinstance(e, FormatError):
            raise
        # a field of an unexpected type that no specific check caught
        raise _fail("program", f"malformed ({type(e).__name__}: {e})") from None
