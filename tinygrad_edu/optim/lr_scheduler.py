"""Learning-rate schedules: `StepLR`, `MultiStepLR`, `ExponentialLR`, `CosineAnnealingLR`,
`LambdaLR`, as in `torch.optim.lr_scheduler`.

A schedule remembers each group's starting rate (`base_lrs`) and, on every `step()`
(once per epoch, after `optimizer.step()`), writes the rate for the next epoch into
`optimizer.param_groups[i]["lr"]`. Each rate is computed from the epoch number in
closed form, so it is easy to read and plot. Core layer.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from typing import Any

from . import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR"]


class LRScheduler:
    """Base class: subclasses give `_rate(base_lr, epoch)`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()  # epoch 0: the starting rates, as PyTorch's constructor does

    def _rate(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates the last `step()` set, one per parameter group."""
        return list(self._last_lr)

    def step(self) -> None:
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self._rate(base, self.last_epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler  # PyTorch's older name


class StepLR(LRScheduler):
    r"""lr = base_lr * gamma ** (epoch // step_size).

    Example:
        >>> import tinygrad_edu as tg
        >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = tg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> rates = []
        >>> for epoch in range(5):
        ...     rates.append(sched.get_last_lr()[0])
        ...     sched.step()
        >>> rates
        [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones passed)."""

    def __init__(
        self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** bisect.bisect_right(self.milestones, epoch)


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma**epoch


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,  # noqa: N803 - PyTorch's name
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr: float, epoch: int) -> float:
        cos = (1 + math.cos(math.pi * epoch / self.T_max)) / 2
        return self.eta_min + (base_lr - self.eta_min) * cos


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch)."""

    def __init__(
        self, optimizer: Optimizer, lr_lambda: Callable[[int], float], last_epoch: int = -1
    ) -> None:
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.lr_lambda(epoch)
