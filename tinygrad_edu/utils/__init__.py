"""`tg.utils`: PyTorch's `torch.utils` names; `tg.utils.data` holds `Dataset` and `DataLoader`,
`tg.utils.checkpoint` holds `checkpoint` (activation checkpointing).

Sits beside nn/optim/data: imports `tinygrad_edu.core` only.
"""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
