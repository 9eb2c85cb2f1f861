"""`StaticGraph`: a recorded program you can call, read, differentiate, optimise and save.

`trace(fn, *example_inputs)` runs `fn` once and returns a `StaticGraph`; calling it
replays the recorded ops on new inputs without running `fn` again. Its text is the
program, one op per line with the learner's line that made it (like a jaxpr).

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import contextlib
import copy
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import DataError, ShapeError, TracingError, message
from ..core.grad_mode import enable_grad
from ..core.tensor import Tensor
from . import autodiff, ir, runtime
from .tracer import Tracer, current, flatten_outputs, input_names, is_placeholder

Signature = namedtuple("Signature", "name shape dtype")


class Placeholder(Tensor):
    r"""A named stand-in for an input: a shape and dtype, and zeros as its value.

    Rules: pass placeholders to `trace` instead of example data, or create them inside
    `with tg.static.Graph() as g:` and build ops on them (define-then-run); the values
    are supplied later as feeds. A placeholder's own value is zeros and means nothing.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.static.placeholder((2, 3), name="x")
        placeholder('x', shape=(2, 3), dtype=float64)
    """

    def __repr__(self) -> str:
        return f"placeholder({self.name!r}, shape={self.shape!r}, dtype={self.dtype.name})"


def placeholder(shape: Sequence[int], name: str = "x", dtype: Any = "float64") -> Placeholder:
    r"""Declare an input by shape, name and dtype (see `Placeholder`).

    Inside an active `tg.static.Graph()`, the placeholder becomes one of its inputs.

    Args:
        shape: the exact shape the graph will be fed (static shapes, no None dims).
        name: the name used in feeds, program text and error messages.
        dtype: a numpy dtype name, float64 by default.

    Raises:
        DataError: a shape that is not a tuple of non-negative integers.

    Example:
        >>> import tinygrad_edu as tg
        >>> g = tg.static.trace(lambda x: x * 2, tg.static.placeholder((3,), "x"))
        >>> g([1.0, 2.0, 3.0])
        tensor([2., 4., 6.])
    """
    if not all(isinstance(s, (int, np.integer)) and s >= 0 for s in tuple(shape)):
        raise DataError(
            message(
                "placeholder",
                f"shape must be non-negative integers, got {tuple(shape)!r}",
                source.here(),
                "static graphs have fixed shapes; use tg.static.function to "
                "retrace for each new shape",
            )
        )
    t = Placeholder.wrap(np.zeros(tuple(int(s) for s in shape), dtype=np.dtype(dtype)))
    assert isinstance(t, Placeholder)  # wrap makes an instance of the class it is called on
    t.name = name
    tr = current()
    if tr is not None and tr.graph is not None:
        tr.graph._add_placeholder(t)
    return t


def _as_array(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x)
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)  # a numpy number keeps its dtype (np.int64 stays int64)
    return np.asarray(x, dtype=np.float64)


class StaticGraph:
    r"""A traced program: call it with new inputs, read it, differentiate it, save it.

    Rules: inputs must have exactly the traced shapes and dtypes (errors name the
    input, the expected and the actual shape); outputs come back as Tensors that need
    no grad. Calling it replays the recorded ops, never the original Python function.

    Example:
        >>> import tinygrad_edu as tg
        >>> g = tg.static.trace(lambda x: (x * x).sum(), tg.tensor([1.0, 2.0]))
        >>> g(tg.tensor([3.0, 4.0]))
        tensor(25.)
        >>> g.ops
        ('Mul', 'Sum')
    """

    def __init__(
        self, program: ir.Program, structure: str = "single", name: str = "f", passes: tuple = ()
    ) -> None:
        self.program = program
        self.structure = structure
        self.name = name
        self.passes = tuple(passes)

    # --- reading ---------------------------------------------------------------------

    @property
    def inputs(self) -> tuple:
        """`Signature(name, shape, dtype)` of each input, in call order."""
        cached = self.__dict__.get("_inputs")
        if cached is not None and cached[0] is self.program:
            return cached[1]
        nm = ir.names(self.program)
        sig = tuple(
            Signature(nm[v], self.program.vars[v].shape, self.program.vars[v].dtype)
            for v in self.program.inputs
        )
        self._inputs = (self.program, sig)
        return sig

    @property
    def outputs(self) -> tuple:
        """`Signature(name, shape, dtype)` of each output."""
        nm = ir.names(self.program)
        return tuple(
            Signature(nm[v], self.program.vars[v].shape, self.program.vars[v].dtype)
            for v in self.program.outputs
        )

    @property
    def ops(self) -> tuple:
        """The op names of the top-level equations, in execution order."""
        return tuple(e.op for e in self.program.eqns)

    @property
    def eqns(self) -> tuple:
        return tuple(self.program.eqns)

    def num_ops(self) -> int:
        """Equations including those inside `cond` / `while_loop` sub-programs."""
        return self.program.count_ops()

    def __str__(self) -> str:
        lines = [f"# {name}: {before} ops -> {after} ops" for name, before, after in self.passes]
        return "\n".join(lines + ir.program_text(self.program, title=self.name))

    def __repr__(self) -> str:
        return str(self)

    @property
    def python_source(self) -> str:
        """The Python function that a call replays: this program, compiled once.

        One line per op, the numpy a careful person would write by hand: `v9 = x @ w1`
        for a matmul, `np.where(v11 <= 0, 0.0, v37)` for relu's backward, which reads the
        forward's values by name. Shapes and dtypes are known before the run, so every
        check and every broadcast-undoing sum is planned once, and lines that read
        constants only are computed once, at compile time (left as comments). An op with
        no numpy line (a learner's own `Function`, a batched matmul) calls its class's
        `forward` with a new context, kept as `ctxN` where a backward line calls the
        op's `backward` on it. No Python function of yours runs and no graph is built:
        this is what define-then-run buys.

        Example:
            >>> import tinygrad_edu as tg
            >>> g = tg.static.trace(lambda x: (x * x).sum(), tg.tensor([1.0, 2.0]))
            >>> print(g.python_source)
            def replay(x):
                v2 = x * x
                v3 = np.asarray(np.add.reduce(v2, axis=None))
                return [v3]
            <BLANKLINE>
        """
        return runtime.runner(self.program).source

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    # --- running ---------------------------------------------------------------------

    def _check(self, args: tuple, kwargs: dict) -> list:
        """The call's inputs as arrays in the program's order, each checked against its type."""
        types = self._types()
        if not kwargs and len(args) == len(types):  # PERF: the usual call, checked in one pass
            arrays = []
            for a, (shape, dtype) in zip(args, types):
                if type(a) is not np.ndarray:
                    if type(a) is Tensor:  # PERF: its array, as np.asarray(a) gives it, faster
                        a = a.numpy()
                    elif isinstance(a, Tensor):
                        a = np.asarray(a)
                    else:
                        break
                # a dtype numpy made is one shared object: `is` is the quick test
                if a.shape != shape or (a.dtype is not dtype and a.dtype != dtype):
                    break
                arrays.append(a)
            else:
                return arrays
        args = self._positional(args, kwargs)
        return [self._checked_input(s, a) for s, a in zip(self.inputs, args)]

    def _types(self) -> tuple:
        """`(shape, dtype)` of each input, made once per program (what every call checks)."""
        cached = self.__dict__.get("_input_types")
        if cached is None or cached[0] is not self.program:
            cached = self._input_types = (
                self.program,
                tuple((s.shape, s.dtype) for s in self.inputs),
            )
        return cached[1]

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        """Inputs passed by name put in their places; an error for a missing or unknown one."""
        sig = self.inputs
        if kwargs:
            by_name = {s.name: i for i, s in enumerate(sig)}
            full = list(args) + [None] * (len(sig) - len(args))
            for k, v in kwargs.items():
                if k not in by_name:
                    raise TypeError(
                        message(
                            self.name,
                            f"unknown input {k!r}",
                            source.here(),
                            f"the inputs are {[s.name for s in sig]}",
                        )
                    )
                full[by_name[k]] = v
            args = tuple(full)
        if len(args) != len(sig) or any(a is None for a in args):
            got = sum(a is not None for a in args)
            missing = [s.name for s, a in zip(sig, list(args) + [None] * len(sig)) if a is None]
            raise TypeError(
                message(
                    self.name,
                    f"expected {len(sig)} input(s) {[s.name for s in sig]}, got {got}",
                    source.here(),
                    f"feed {missing}" if missing else "pass one value per input",
                )
            )
        return args

    def _checked_input(self, s: Signature, a: Any) -> np.ndarray:
        """One input as an array of the shape and dtype it was traced with, or an error."""
        arr = _as_array(a)
        if arr.shape != s.shape:
            raise ShapeError(
                message(
                    self.name,
                    f"input {s.name!r} was traced with shape {s.shape!r}, got shape {arr.shape!r}",
                    source.here(),
                    "a static graph has fixed shapes: trace again for this shape, or use "
                    "tg.static.function, which retraces for every new shape",
                )
            )
        if arr.dtype != s.dtype:
            raise DataError(
                message(
                    self.name,
                    f"input {s.name!r} was traced as {s.dtype.name}, got {arr.dtype.name}",
                    source.here(),
                    f"convert it first, e.g. x.astype('{s.dtype.name}')",
                )
            )
        return arr

    def run_arrays(self, arrays: list) -> list:
        """Replay on already checked arrays; returns arrays (the fast path)."""
        return runtime.runner(self.program).run(arrays)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arrays = self._check(args, kwargs)
        tr = current()
        if tr is not None and any(isinstance(a, Tensor) and tr.find(a) is not None for a in args):
            return self._inline(tr, args)
        outs = runtime.runner(self.program).run(arrays)
        if self.structure == "single":
            return Tensor.wrap(outs[0])
        return tuple(map(Tensor.wrap, outs))

    def _inline(self, tr: Tracer, args: tuple) -> Any:
        """Called inside another trace: copy this program's equations into it."""
        from .control_flow import inline

        outs = inline(tr, self.program, list(args))
        return outs[0] if self.structure == "single" else tuple(outs)

    # --- gradients -------------------------------------------------------------------

    def grad(
        self, wrt: Sequence[Any] | None = None, output: int = 0, with_value: bool = False
    ) -> StaticGraph:
        r"""A StaticGraph that returns d(output)/d(inputs in `wrt`): the backward program.

        Rules: the chosen output must hold one number. The new program is this
        program plus one `vjp` line per op on the path, which calls that op's own
        backward rule (the eager engine's rule, not a copy) with what its forward
        line saved during the same run. Gradients of an input reached by several
        paths are summed by `Add` lines.

        Args:
            wrt: input names or positions (default: every floating-point input).
            output: which output to differentiate.
            with_value: also return the outputs, before the gradients.

        Returns:
            A StaticGraph with the same inputs, returning one gradient per `wrt`.

        Example:
            >>> import tinygrad_edu as tg
            >>> g = tg.static.trace(lambda x: (x * x).sum(), tg.tensor([1.0, 2.0]))
            >>> g.grad()(tg.tensor([3.0, 4.0]))
            tensor([6., 8.])
        """
        prog = copy.copy(self.program)
        prog.eqns, prog.vars, prog.consts = list(prog.eqns), dict(prog.vars), dict(prog.consts)
        prog.__dict__.pop("_runner", None)
        prog.__dict__.pop("_runner_all", None)
        sig = self.inputs
        if wrt is None:
            idx = [i for i, s in enumerate(sig) if s.dtype.kind == "f"]
        else:
            names = [s.name for s in sig]
            idx = []
            for w in wrt:
                if isinstance(w, str) and w in names:
                    idx.append(names.index(w))
                elif isinstance(w, int) and 0 <= w < len(sig):
                    idx.append(w)
                else:
                    raise TracingError(
                        message(
                            "grad",
                            f"{w!r} is not an input of this graph",
                            source.here(),
                            f"the inputs are {names}",
                        )
                    )
        loss = prog.outputs[output]
        autodiff.check_scalar(prog.vars[loss], f"output {output}")
        new_id = ir.IdSource(ir.max_id(prog) + 1)
        seed = new_id()
        v = prog.vars[loss]
        prog.vars[seed] = ir.Var(seed, v.shape, v.dtype, "one")
        prog.consts[seed] = np.ones(v.shape, dtype=v.dtype)  # d(loss)/d(loss) = 1
        grads = autodiff.append_backward(
            prog, [(loss, seed)], [prog.inputs[i] for i in idx], new_id, prog
        )
        prog.outputs = (list(prog.outputs) if with_value else []) + grads
        structure = "single" if len(prog.outputs) == 1 else "tuple"
        return StaticGraph(prog, structure, f"grad_{self.name}")

    backward_program = grad

    # --- export and passes -----------------------------------------------------------

    def save(self, path: str) -> None:
        """Write `path` (.json, the program) and the .npz beside it (constants); see io."""
        from .io import save

        save(self, path)

    def optimize(self) -> StaticGraph:
        """Constant folding, then dead-code elimination (see `tg.static.passes`)."""
        from .passes import eliminate_dead_code, fold_constants

        return eliminate_dead_code(fold_constants(self))


def trace(
    fn: Callable[..., Any], *example_inputs: Any, strict: bool = False, name: str | None = None
) -> StaticGraph:
    r"""Run `fn` once on the example inputs and record what it did as a `StaticGraph`.

    Rules: each example input (Tensor, array, number or `placeholder`) becomes an input
    of fixed shape and dtype, named by `fn`'s Python parameter for it (`def loss(x, w1)`
    gives inputs `x`, `w1`, whatever the tensors are called; a placeholder keeps its
    declared name; `*args` take the tensor's own name, such as a module parameter's
    `l1.weight`). These names are what `.grad(wrt=[...])` and error messages use. Any other tensor `fn` uses (a captured weight, a
    tensor it creates) is frozen in as a constant. Python control flow runs once, so
    loops unroll and an `if` on a traced value freezes the branch it took (a
    `TracerWarning` says where; `strict=True` raises `TracingError` instead).

    Args:
        fn: a function of Tensors returning a Tensor or a tuple of Tensors.
        *example_inputs: values that fix the shapes and dtypes.
        strict: make every frozen branch or value an error.
        name: the graph's name in its text (default: `fn.__name__`).

    Returns:
        A StaticGraph that replays the ops on new inputs.

    Raises:
        TracingError: in strict mode, or when `fn` returns something other than Tensors.

    Example:
        >>> import tinygrad_edu as tg
        >>> g = tg.static.trace(lambda x: (2 * x).relu(), tg.tensor([1.0, -1.0]))
        >>> g(tg.tensor([-3.0, 3.0]))
        tensor([0., 6.])
    """
    return record(Tracer(strict=strict), fn, example_inputs, name)


def record(
    tr: Tracer, fn: Callable[..., Any], example_inputs: Sequence[Any], name: str | None = None
) -> StaticGraph:
    """`trace` with a tracer of the caller's (tg.static.function sets its `lift` rule)."""
    names = input_names(fn, len(example_inputs), tuple(example_inputs))
    args = []
    for nm, ex in zip(names, example_inputs):
        t = Tensor.wrap(np.array(_as_array(ex)))
        t.name = nm
        t.requires_grad = bool(getattr(ex, "requires_grad", False))
        tr.add_input(t, nm)
        args.append(t)
    quiet = any(is_placeholder(ex) for ex in example_inputs)
    # recorded with grad mode on, whatever the caller's: a `with no_grad():` inside `fn`
    # is what cuts gradients in the program (the tracer records a Detach there)
    with tr, enable_grad(), np.errstate(all="ignore") if quiet else contextlib.nullcontext():
        result = fn(*args)
        outs, structure = flatten_outputs(result)
        tr.program.outputs = tr.output_vars(outs)
    fname = str(name or getattr(fn, "__name__", "f"))
    return StaticGraph(tr.program, structure, "f" if fname == "<lambda>" else fname)


def grad(output: Tensor, inputs: Any) -> tuple:
    r"""d(output)/d(inputs) that works eagerly *and* inside a trace.

    Rules: eagerly this is `tg.grad(output, inputs)`. Inside `trace` it appends the
    backward program to the trace (one `vjp` line per op, using each op's own backward
    rule), so a traced training step replays forward, backward and update together.
    `output` must hold one number.

    Returns:
        One gradient Tensor per input (zeros for an input that `output` ignores).

    Example:
        >>> import tinygrad_edu as tg
        >>> def step(w):
        ...     (gw,) = tg.static.grad((w * w).sum(), [w])
        ...     return w - 0.1 * gw
        >>> g = tg.static.trace(step, tg.tensor([1.0, 2.0]))
        >>> g(tg.tensor([10.0, 20.0]))
        tensor([ 8., 16.])
    """
    single = isinstance(inputs, Tensor)
    ins = [inputs] if single else list(inputs)
    tr = current()
    if tr is None or tr.find(output) is None:
        from ..core.engine import grad as eager_grad

        return eager_grad(output, ins, allow_unused=True)
    loss = tr.find(output)
    autodiff.check_scalar(tr.program.vars[loss], "the output")
    wrt = [tr.lookup(t) for t in ins]
    prog = tr.program
    seed = tr._new_var(output.shape, output.dtype, "one")
    prog.consts[seed] = np.ones(output.shape, dtype=output.dtype)
    tr.values[seed] = prog.consts[seed]
    start = len(prog.eqns)
    gvars = autodiff.append_backward(prog, [(loss, seed)], wrt, tr.new_id, prog)
    # Values for the rest of the trace: re-run the forward lines the new vjp lines need
    # (to get their saved values), then the new lines.
    env = dict(tr.values)
    env.update(prog.consts)
    tape: dict = {}
    wanted = ir.saved_for_backward(prog.eqns[start:])
    for e in prog.eqns[:start]:
        if e.outs and e.outs[0] in wanted:
            runtime.run_equation(e, dict(env), tape, True)
    for e in prog.eqns[start:]:
        runtime.run_equation(e, env, tape, False)
        for o in e.outs:
            tr.values[o] = env[o]
            tr.depends.add(o)
    out = []
    for g in gvars:
        t = Tensor.wrap(env[g] if g in env else prog.consts[g])
        tr._bind(t, g)
        out.append(t)
    return tuple(out)


class Graph:
    r"""Define-then-run, in the style of TensorFlow 1: build first, feed values later.

    Rules: inside `with tg.static.Graph() as g:`, `tg.static.placeholder(...)` declares
    an input and every op on it is recorded, not meaningfully computed (placeholders
    hold zeros). `g.run(fetches, feeds)` then computes the fetched tensors for the
    fed values by replaying only the ops they need. Each needed placeholder must be
    fed, with its exact shape; errors name the placeholder.

    Example:
        >>> import tinygrad_edu as tg
        >>> with tg.static.Graph() as g:
        ...     x = tg.static.placeholder((3,), name="x")
        ...     y = (x * 2).sum()
        >>> g.run(y, {"x": [1.0, 2.0, 3.0]})
        tensor(12.)
    """

    def __init__(self, strict: bool = False) -> None:
        self._tracer = Tracer(strict=strict)
        self._tracer.graph = self
        self._placeholders: list = []
        self._cache: dict = {}

    def __enter__(self) -> Graph:
        self._tracer.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._tracer.__exit__(*exc)

    def _add_placeholder(self, t: Placeholder) -> None:
        if any(p.name == t.name for p in self._placeholders):
            raise TracingError(
                message(
                    "placeholder",
                    f"this graph already has a placeholder named {t.name!r}",
                    source.here(),
                    "give every placeholder its own name",
                )
            )
        self._tracer.add_input(t, t.name or "")
        self._placeholders.append(t)

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self._placeholders)
        return f"Graph({len(self._tracer.program.eqns)} ops, placeholders: {names})"

    def static_graph(self, fetches: Any) -> StaticGraph:
        """The StaticGraph computing `fetches` from the placeholders they need."""
        from .passes import eliminate_dead_code

        outs, structure = flatten_outputs(fetches)
        key = tuple(id(t) if isinstance(t, Tensor) else None for t in outs)
        if key in self._cache:
            return self._cache[key]
        vids = []
        for t in outs:
            vid = self._tracer.find(t) if isinstance(t, Tensor) else None
            if vid is None:
                raise TracingError(
                    message(
                        "Graph.run",
                        "a fetched value was not built inside this graph",
                        source.here(),
                        "fetch tensors computed from this graph's placeholders inside its `with` "
                        "block",
                    )
                )
            vids.append(vid)
        self._tracer.keep.extend(t for t in outs if isinstance(t, Tensor))  # ids stay unique
        prog = copy.copy(self._tracer.program)
        prog.outputs = vids
        full = StaticGraph(prog, structure, "graph")
        g = eliminate_dead_code(full, prune_inputs=True)
        g.passes = ()
        self._cache[key] = g
        return g

    def run(self, fetches: Any, feeds: dict | None = None) -> Any:
        """Compute `fetches` (a tensor or a list of them) with placeholder values `feeds`.

        Args:
            fetches: tensors built inside this graph.
            feeds: `{placeholder_or_name: value}`.

        Raises:
            FeedError: a needed placeholder is not fed, or a feed names no placeholder.
            ShapeError / DataError: a feed has the wrong shape or dtype.
        """
        g = self.static_graph(fetches)
        by_name = {}
        for k, v in (feeds or {}).items():
            key = k.name if isinstance(k, Placeholder) else k
            if not any(p.name == key for p in self._placeholders):
                raise FeedError(
                    message(
                        "Graph.run",
                        f"{key!r} is not a placeholder of this graph",
                        source.here(),
                        f"the placeholders are {[p.name for p in self._placeholders]}",
                    )
                )
            by_name[key] = v
        args = []
        for s in g.inputs:
            if s.name not in by_name:
                raise FeedError(
                    message(
                        "Graph.run",
                        f"placeholder {s.name!r} (shape {s.shape!r}) needs a value "
                        "to compute the fetches, but none was fed",
                        source.here(),
                        f"add it to the feeds: {{{s.name!r}: <array of shape {s.shape!r}>}}",
                    )
                )
            args.append(by_name[s.name])
        g.name = "Graph.run"
        return g(*args)


class FeedError(ValueError):
    """`Graph.run` was not given a needed placeholder value (or an unknown one)."""
