"""Helpers for the nn tests: creation-site text and gradchecks through a module's parameters."""

from helpers import site_of  # noqa: F401 - re-exported for the nn tests

import tinygrad_edu as tg


def module_gradcheck(module, fn, *inputs):
    """`tg.gradcheck` of `fn(module, *inputs)` with respect to the inputs *and* every parameter.

    gradcheck perturbs float64 copies of what it is given, so the copies of the
    parameters are swapped into the module's registry while `fn` runs.
    """
    owners = [
        (m, key)
        for _, m in module.named_modules()
        for key, p in m._parameters.items()
        if p is not None
    ]
    originals = [m._parameters[key] for m, key in owners]
    n = len(inputs)

    def run(*tensors):
        for (m, key), p in zip(owners, tensors[n:]):
            m._parameters[key] = p
        try:
            return fn(module, *tensors[:n])
        finally:
            for (m, key), p in zip(owners, originals):
                m._parameters[key] = p

    return tg.gradcheck(run, (*inputs, *originals))
