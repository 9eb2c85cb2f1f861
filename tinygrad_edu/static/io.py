"""Export: a StaticGraph as human-readable JSON (the program) plus .npz (the arrays).

`g.save("model")` writes `model.json` and `model.npz`; `tg.static.load("model")`
rebuilds a StaticGraph that runs without the original Python code. The format:

    {"format": "tinygrad_edu.static", "version": 1, "name": "f", "structure": "single",
     "program": {"inputs": [1], "outputs": [3],
                 "vars": [{"id": 1, "name": "x", "shape": [3], "dtype": "float64"}, ...],
                 "consts": [{"id": 2, "array": "a0"}],
                 "eqns": [{"op": "Mul", "in": [1, 2], "out": [3], "attrs": {},
                           "site": "cell [2], line 1: y = x * 2", "subs": {}}]}}

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
from .ir import STRUCTURED, ZERO, Eqn, Program, Var
from .npz import DTYPES, MAX_ARRAY_BYTES, MAX_ARRAYS, MAX_ELEMENTS, NpzError, read_npz

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
MAX_CHECK_BYTES = 256 * 2**20  # all declared values of one program (the type check runs it)


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

    def array(self, arr: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = np.array(arr, order="C")  # (ascontiguousarray makes 0-d 1-d)
        return key

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
    """Write `graph` to `path` (.json) and the arrays beside it (.npz); see the module doc.

    An `ExportedProgram` (tg.static.export) is written in its own format, which keeps its
    dynamic dims; `load` reads either.
    """
    from .exported import ExportedProgram
    from .exported import save as save_export

    if isinstance(graph, ExportedProgram):
        save_export(graph, path)
        return
    w = _Writer()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "structure": graph.structure,
        "program": w.program(graph.program),
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
        check_types(program, where)
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


def check_types(p: Program, where: str) -> None:
    """Every declared type must be what the program computes: run each plain op once on
    zeros of its declared input types, and compare sub-programs' types with their
    equation's. (A hand-edited file could declare anything: replaying it would give
    other shapes than it says, or a raw numpy error, instead of this FormatError.)"""
    total = sum(int(np.prod(v.shape)) * v.dtype.itemsize for v in p.vars.values())
    if total > MAX_CHECK_BYTES:
        raise _fail(
            where, f"its values declare {total} bytes, more than the {MAX_CHECK_BYTES} allowed"
        )
    env = {vid: np.zeros(p.vars[vid].shape, p.vars[vid].dtype) for vid in p.inputs}
    env.update(p.consts)
    for i, e in enumerate(p.eqns):
        w = f"{where}.eqns[{i}]"
        if e.op in STRUCTURED:
            _check_structured_types(e, p, w)
            env.update({o: np.zeros(p.vars[o].shape, p.vars[o].dtype) for o in e.outs})
            continue
        ins = [env[v] for v in e.ins]
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(e.fn.forward(object.__new__(e.fn), *ins, **e.attrs))
        except Exception as err:  # anything the op raises: these types do not fit it
            types = ", ".join(p.vars[v].type_text() for v in e.ins)
            raise _fail(
                w,
                f"{e.op} cannot run on its declared inputs ({types}): {type(err).__name__}: {err}",
            ) from None
        v = p.vars[e.outs[0]]
        if out.shape != v.shape or out.dtype != v.dtype:
            got = ", ".join(str(d) for d in out.shape)
            raise _fail(
                w,
                f"{e.op} computes {out.dtype.name}[{got}] from its declared inputs, "
                f"the file declares {v.type_text()}",
            )
        env[e.outs[0]] = out


def _types(prog: Program, vids: Any) -> list:
    return [(prog.vars[v].shape, prog.vars[v].dtype) for v in vids]


def _check_structured_types(e: Eqn, p: Program, w: str) -> None:
    """Sub-programs take and give exactly the types their equation declares."""
    outs = _types(p, e.outs)
    if e.op == "cond":
        ins, pairs = _types(p, e.ins[1:]), [("true", e.subs["true"]), ("false", e.subs["false"])]
        expected = [(name, sub, ins, outs) for name, sub in pairs]
    elif e.op == "while_loop":
        ins = _types(p, e.ins)
        expected = [
            ("body", e.subs["body"], ins, outs),
            ("cond", e.subs["cond"], ins, _types(e.subs["cond"], e.subs["cond"].outputs)),
        ]
        if ins[: len(outs)] != outs:
            raise _fail(w, "the while_loop's outputs do not have its carry's types")
    else:  # vjp: one gradient per needed input, of that input's type
        needed = [t for t, need in zip(e.attrs["_in_types"], e.attrs["needs"]) if need]
        if outs != [(tuple(s), d) for s, d in needed]:
            raise _fail(
                w, "the vjp's outputs do not have the types of the inputs it differentiates"
            )
        return
    for name, sub, ins, sub_outs in expected:
        if _types(sub, sub.inputs) != ins or _types(sub, sub.outputs) != sub_outs:
            raise _fail(
                w,
                f"sub-program {name!r} does not take and give the types the "
                f"{e.op} equation declares",
            )


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


def _load_export(doc: dict, npath: str, jpath: str) -> Any:
    """A file `tg.static.export` wrote, as an ExportedProgram (exported.py reads it)."""
    from .exported import VERSION as EXPORT_VERSION
    from .exported import from_doc

    if doc.get("version") != EXPORT_VERSION:
        raise _fail(jpath, f"export format version {doc.get('version')!r} is not {EXPORT_VERSION}")
    try:
        return from_doc(doc, _read_arrays(npath), jpath)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        if isinstance(e, FormatError):
            raise
        raise _fail("programs", f"malformed ({type(e).__name__}: {e})") from None


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
    from .exported import FORMAT as EXPORT_FORMAT
    from .program import StaticGraph

    jpath, npath = _paths(os.fspath(path))
    doc = _read_json(jpath)
    if isinstance(doc, dict) and doc.get("format") == EXPORT_FORMAT:
        return _load_export(doc, npath, jpath)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _fail(jpath, f'not a {FORMAT} file (the "format" field is missing or different)')
    if doc.get("version") != VERSION:
        raise _fail(
            jpath,
            f"format version {doc.get('version')!r}, this tinygrad_edu reads version {VERSION}",
        )
    if (
        set(doc) != {"format", "version", "name", "structure", "program"}
        or doc["structure"] not in ("single", "tuple")
        or not isinstance(doc["name"], str)
    ):
        raise _fail(jpath, "the top level needs format, version, name, structure and program")
    arrays = _read_arrays(npath)
    try:
        program = _Reader(arrays, jpath).program(doc["program"], "program")
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        if isinstance(e, FormatError):
            raise
        # a field of an unexpected type that no specific check caught
        raise _fail("program", f"malformed ({type(e).__name__}: {e})") from None
    return StaticGraph(program, doc["structure"], doc["name"])
