"""`tg.debug`: find where a graph goes wrong, and watch backward one node at a time.

- `detect_anomaly()`: raise at the first op that makes NaN/inf (forward or backward).
- `break_on(...)`: stop (pdb), raise or record when a matching node is built or run.
- `backward_steps(loss)`: backward as a generator of steps (the stepper's model).
- `check_nodes(loss)`: per-node gradient check, finds a wrong custom backward.
- `log_values(...)` / `log_grads(...)` / `log_ops()`: deterministic printouts for lessons.

All hooks go through `tinygrad_edu.core.function.add_observer`; with every mode off,
nothing is registered and the core runs at full speed.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from .anomaly import AnomalyError, detect_anomaly, is_anomaly_enabled
from .breakpoints import Breakpoint, Hit, break_on, is_interactive, last_hit
from .log import log_grads, log_ops, log_values
from .nodecheck import NodeCheck, NodeReport, check_nodes
from .stepping import Step, backward_steps

__all__ = [
    "AnomalyError",
    "detect_anomaly",
    "is_anomaly_enabled",
    "Breakpoint",
    "Hit",
    "break_on",
    "is_interactive",
    "last_hit",
    "Step",
    "backward_steps",
    "NodeCheck",
    "NodeReport",
    "check_nodes",
    "log_values",
    "log_grads",
    "log_ops",
]
