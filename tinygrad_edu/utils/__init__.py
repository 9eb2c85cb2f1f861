"""`tg.utils`: PyTorch's `torch.utils` names; `tg.utils.data` holds `Dataset` and `DataLoader`.

Sits beside nn/optim/data: imports `tinygrad_edu.core` only.
"""

from . import data

__all__ = ["data"]
