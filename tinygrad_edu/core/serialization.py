"""`tg.save(obj, f)` and `tg.load(f)`: tensors and state dicts in a numpy .npz file.

PyTorch pickles, and unpickling a file can run any code in it. Here the file is an
.npz archive: the arrays, plus one JSON text (`__tree__`) saying how they nest in
dicts, lists and tuples, and which were tensors. Loading reads it with
`allow_pickle=False`, so a file can hold numbers and nothing that runs. Modules and
other objects are refused: save `model.state_dict()` instead, as PyTorch recommends.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import json
import numbers
from typing import Any

import numpy as np

from . import source
from .dtypes import check_device
from .errors import DataError, message
from .tensor import Tensor

_TREE = "__tree__"


def save(obj: Any, f: Any) -> None:
    r"""Write a tensor, an array, or dicts / lists / tuples of them and of numbers to `f`.

    Args:
        obj: e.g. `model.state_dict()`, `optimizer.state_dict()`, a tensor, `{"epoch": 3, ...}`.
        f: a file name (used as given, no suffix added) or a binary file object.

    Raises:
        DataError: `obj` holds something that is not data (a Module, a function, ...).

    Example:
        >>> import io, tinygrad_edu as tg
        >>> buf = io.BytesIO()
        >>> tg.save({"w": tg.tensor([1.0, 2.0]), "step": 3}, buf)
        >>> _ = buf.seek(0)
        >>> tg.load(buf)
        {'w': tensor([1., 2.]), 'step': 3}
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays, "obj")
    arrays[_TREE] = np.array(json.dumps(tree))
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as fh:  # np.savez would add ".npz" to a plain name
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub: kwds typed as allow_pickle
    else:
        np.savez(f, **arrays)  # type: ignore[arg-type]


def load(f: Any, map_location: Any = None, weights_only: Any = True, **kwargs: Any) -> Any:
    """Read what `save` wrote: tensors come back as tensors (`map_location` may be "cpu")."""
    check_device(map_location if not callable(map_location) else None, "load")
    with np.load(f, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if _TREE not in arrays:
        raise DataError(
            message(
                "load",
                "this file was not written by tg.save (no __tree__ "
                "entry); files saved by PyTorch are pickles, which are not read",
                source.here(),
                "save it again with tg.save, or load the arrays with numpy",
            )
        )
    return _decode(json.loads(str(arrays[_TREE])), arrays)


def _encode(obj: Any, arrays: dict[Any, Any], where: str) -> Any:
    if isinstance(obj, Tensor):
        key = f"a{len(arrays)}"
        arrays[key] = np.array(obj._data)
        return {"tensor": key, "requires_grad": obj.requires_grad}
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"array": key}
    if obj is None or isinstance(obj, (bool, str)):
        return {"value": obj}
    if isinstance(obj, numbers.Integral):
        return {"value": int(obj)}
    if isinstance(obj, numbers.Real):
        return {"value": float(obj)}
    if isinstance(obj, dict):
        for k in obj:
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise DataError(
                    message(
                        "save",
                        f"{where} has a key {k!r}: only text and whole numbers can be keys",
                        source.here(),
                    )
                )
        return {"dict": [[k, _encode(v, arrays, f"{where}[{k!r}]")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    hint = (
        "save model.state_dict() and load it with model.load_state_dict(tg.load(f))"
        if hasattr(obj, "state_dict")
        else "save tensors, arrays, numbers and text"
    )
    raise DataError(
        message(
            "save",
            f"{where} is a {type(obj).__name__}, which is not data: "
            "saving it would need pickle, which can run code when loaded",
            source.here(),
            hint,
        )
    )


def _decode(node: dict[Any, Any], arrays: dict[Any, Any]) -> Any:
    if "tensor" in node:
        t = Tensor._make(arrays[node["tensor"]])
        return t.requires_grad_() if node["requires_grad"] else t
    if "array" in node:
        return arrays[node["array"]]
    if "value" in node:
        return node["value"]
    if "dict" in node:
        return {k: _decode(v, arrays) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, arrays) for v in node["list"]]
    return tuple(_decode(v, arrays) for v in node["tuple"])
