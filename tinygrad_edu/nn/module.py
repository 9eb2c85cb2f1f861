"""`Module` (a container of parameters and sub-modules) and `Parameter` (a trainable tensor).

A Module registers every `Parameter` and `Module` assigned to it as an attribute, in
assignment order, so `parameters()` and `named_parameters()` are deterministic. While a
module runs (`module(x)`), its name is on `core.function.module_path_stack()`, so every node built
inside records the module path (e.g. `("net", "0")`) and the graph view can cluster it.
Core layer: numpy, the standard library and `tinygrad_edu.core` only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..core import source, views
from ..core.dtypes import check_device, device
from ..core.errors import ShapeError, message
from ..core.function import module_path_stack
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor


class Parameter(Tensor):
    r"""A tensor that a `Module` trains: `requires_grad=True` by default.

    Rules: assigning a Parameter to a Module attribute registers it. If it has no
    name of its own, registration names it after the attribute (`"weight"`), and
    registering the owner inside a parent qualifies it (`"0.weight"`), so graphs show
    the same names as `named_parameters()`. A name you pass yourself is never changed.

    Args:
        data: anything `tg.tensor` accepts (a Tensor is copied, an ndarray is not).
        requires_grad: record ops on it for autograd (default True).
        name: a fixed label for graphs; default None (named on registration).

    Example:
        >>> import tinygrad_edu as tg
        >>> p = tg.nn.Parameter([1.0, 2.0])
        >>> p.requires_grad, p.is_leaf
        (True, True)
    """

    __slots__ = ("_auto_name",)

    def __init__(self, data: Any, requires_grad: bool = True, name: str | None = None) -> None:
        super().__init__(data, requires_grad=requires_grad, name=name)
        self._auto_name = name is None

    def __repr__(self) -> str:
        return f"Parameter containing:\n{super().__repr__()}"


class LoadResult(NamedTuple):
    """What `load_state_dict(strict=False)` could not match."""

    missing_keys: list
    unexpected_keys: list


class Module:
    r"""Base class of every layer and model: holds parameters and sub-modules.

    Rules:
    - Call `super().__init__()` first in a subclass's `__init__`, then assign layers
      and `Parameter`s as attributes; they are registered in assignment order.
      (A plain tensor with `requires_grad=True` is *not* a parameter, as in PyTorch.)
    - Define `forward(...)`; call the module (`model(x)`), never `forward` directly, so
      the module's name is recorded on the nodes built inside.
    - The name recorded is the attribute name inside a parent (`"0"`, `"encoder"`);
      a module called at top level uses `.name` if you set it, else its class name in
      lower case (`"sequential"`).
    - `zero_grad()` sets `.grad` to None (PyTorch's default) unless
      `set_to_none=False`, which fills zeros instead.

    Example:
        >>> import tinygrad_edu as tg
        >>> class Affine(tg.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = tg.nn.Parameter([2.0])
        ...         self.b = tg.nn.Parameter([1.0])
        ...     def forward(self, x):
        ...         return x * self.w + self.b
        >>> m = Affine()
        >>> m(tg.tensor([3.0]))
        tensor([7.], grad_fn=<AddBackward>)
        >>> [n for n, _ in m.named_parameters()]
        ['w', 'b']
    """

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"] = {}
        d["_buffers"] = {}  # tensors saved with the model but not trained (running means)
        d["_unsaved_buffers"] = set()  # names of buffers registered with persistent=False
        d["_modules"] = {}
        d["training"] = True
        d["name"] = None
        d["_key"] = None  # attribute name inside the parent that registered this module

    # --- registration ---------------------------------------------------------------

    def __setattr__(self, key: str, value: Any) -> None:
        if isinstance(value, (Parameter, Module)) and "_parameters" not in self.__dict__:
            raise AttributeError(
                message(
                    f"{type(self).__name__}.{key}",
                    f"cannot register {type(value).__name__} {key!r} before Module.__init__() ran",
                    source.here(),
                    f"call super().__init__() first in {type(self).__name__}.__init__",
                )
            )
        if isinstance(value, Parameter):
            self._modules.pop(key, None)
            self.register_parameter(key, value)
        elif isinstance(value, Module):
            self._parameters.pop(key, None)
            self.add_module(key, value)
        else:
            if "_parameters" in self.__dict__:
                self._parameters.pop(key, None)
                self._modules.pop(key, None)
                if key in self._buffers:  # `self.running_mean = new` replaces the buffer
                    self._buffers[key] = value
                    return
            object.__setattr__(self, key, value)

    def __getattr__(self, key: str) -> Any:
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                message(
                    f"{type(self).__name__}.{key}",
                    "this module was never initialised as a Module",
                    source.here(),
                    f"call super().__init__() first in {type(self).__name__}.__init__",
                )
            )
        if key in d.get("_parameters", ()):
            return d["_parameters"][key]
        if key in d.get("_modules", ()):
            return d["_modules"][key]
        if key in d.get("_buffers", ()):
            return d["_buffers"][key]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")

    def __delattr__(self, key: str) -> None:
        if key in self._parameters:
            del self._parameters[key]
        elif key in self._modules:
            del self._modules[key]
        else:
            object.__delattr__(self, key)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules))

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Keep `tensor` as `self.<name>`: never trained; saved in `state_dict()` unless
        `persistent=False` (then it is a buffer all the same: `buffers()`, `.to()`)."""
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._unsaved_buffers.discard(name)
        else:
            self._unsaved_buffers.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` under `name` (what assigning `self.name = param` does)."""
        self.__dict__.pop(name, None)
        self._parameters[name] = param
        if param is not None and param._auto_name:
            param.name = name

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a sub-module under `name`; its auto-named parameters become `name.<...>`."""
        self.__dict__.pop(name, None)
        self._modules[name] = module
        if module is None:
            return
        module.__dict__["_key"] = name
        for sub, p in module.named_parameters():
            if getattr(p, "_auto_name", False):
                p.name = f"{name}.{sub}"
        # an ancestor that registered us earlier qualifies these names again when it
        # is itself registered; registering children first (the usual order) just works

    # --- traversal ------------------------------------------------------------------

    def named_parameters(
        self, prefix: str = "", recurse: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """`(dotted_name, parameter)` pairs in registration order, each parameter once."""
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_name, mod in mods:
            for name, p in mod._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every parameter once, in registration order (pass this to an optimizer)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """`(dotted_name, buffer)` pairs, as `named_parameters` does for parameters."""
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_name, mod in mods:
            for name, b in mod._buffers.items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules with their attribute names."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module (name `prefix`, "" by default) and every descendant, depth first."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:  # explicit stack: deep models never hit the recursion limit
            name, m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            kids = [
                (f"{name}.{k}" if name else k, c) for k, c in m._modules.items() if c is not None
            ]
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    # --- training helpers -------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's `.grad`: None (default) or zeros (`set_to_none=False`)."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = np.zeros_like(p)

    def train(self, mode: bool = True) -> Module:
        """Set `.training` on this module and every sub-module; returns self."""
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self) -> Module:
        """`train(False)`: layers such as dropout would switch to inference behaviour."""
        return self.train(False)

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`to(dtype)` converts floating parameters and buffers in place; `to("cpu")` keeps
        them (the only device); returns self, as in PyTorch."""
        dtype = kwargs.get("dtype")
        check_device(kwargs.get("device"), "Module.to")
        for a in args:
            if isinstance(a, (str, device)):
                check_device(a, "Module.to")
            elif a is not None:
                dtype = a
        if dtype is not None:
            for t in (*self.parameters(), *self.buffers()):
                if t.dtype.kind == "f":
                    t.data = t.data.to(dtype)
                    if t.grad_held is not None:
                        t.grad = None  # a gradient of the old dtype no longer fits
        return self

    def double(self) -> Module:
        return self.to(np.float64)

    def float(self) -> Module:
        return self.to(np.float32)

    def cpu(self) -> Module:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Module:
        check_device("cuda", "Module.cuda")
        return self

    def apply(self, fn: Any) -> Module:
        """Call `fn(m)` on every sub-module, children first, then self (as PyTorch); returns self."""
        for m in reversed(list(self.modules())):
            fn(m)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    # --- running ----------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward(...)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = module_path_stack()
        if scope:
            name = self._key if self._key is not None else type(self).__name__.lower()
        else:
            name = self.name if self.name else type(self).__name__.lower()
        scope.append(name)
        try:
            return self.forward(*args, **kwargs)
        finally:
            scope.pop()

    # --- saving -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Tensor]:
        r"""`{dotted_name: tensor}` for every parameter, then every buffer, as in PyTorch.

        Rules: the values are copies outside the graph (PyTorch's share the parameters'
        storage, so that a saved "best" state changes as training goes on; here it does not).
        """
        return {name: Tensor.wrap(np.array(t)) for name, t in self._named_state()}

    def _named_state(self) -> Iterator[tuple[str, Tensor]]:
        """Parameters and persistent buffers, module by module (PyTorch's state_dict order)."""
        seen: set[int] = set()
        for mod_name, mod in self.named_modules():
            buffers = [(n, b) for n, b in mod._buffers.items() if n not in mod._unsaved_buffers]
            for name, t in (*mod._parameters.items(), *buffers):
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield (f"{mod_name}.{name}" if mod_name else name), t

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> LoadResult:
        r"""Copy arrays (or tensors) into the parameters with the same dotted names.

        Rules: values are copied in place (the parameters stay the same objects, so an
        optimizer holding them keeps working). With `strict=True` the keys must match
        exactly; shapes must always match.

        Returns:
            `LoadResult(missing_keys, unexpected_keys)` (both empty when strict).

        Raises:
            KeyError: (strict) keys missing from or unknown to this module.
            ShapeError: a value's shape differs from its parameter's.
        """
        own = dict(self._named_state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if unexpected:
                parts.append(f"unexpected keys {unexpected}")
            raise KeyError(
                message(
                    "load_state_dict",
                    f"the state dict does not fit {type(self).__name__}: {'; '.join(parts)}",
                    source.here(),
                    "compare with list(model.state_dict()), or pass strict=False",
                )
            )
        with no_grad():
            for k, p in own.items():
                if k not in state_dict:
                    continue
                value = np.asarray(state_dict[k])  # a Tensor, an array or a list
                if value.shape != p.shape:
                    raise ShapeError(
                        message(
                            "load_state_dict",
                            f"{k!r} expected shape {p.shape!r}, got {value.shape!r}",
                            source.here(),
                            "the saved model has a different layer size",
                        )
                    )
                np.copyto(np.asarray(p), value, casting="same_kind")
                views.bump(p)  # an in-place change: graphs that saved the old value must notice
        return LoadResult(missing, unexpected)

    # --- display ----------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({k}): {_indent(repr(m))}" for k, m in self._modules.items() if m is not None]
        if not children and len(lines) <= 1:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(lines + children)
        return f"{type(self).__name__}(\n  {body}\n)"


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")
