"""The primitive ops, one class each (see elementwise, reduce, movement, linalg)."""

import warnings

# numpy would report log(-1), 1/0 ... as RuntimeWarnings that point into this package
# (and break nbval with machine-specific paths). PyTorch stays silent too: NaN and inf
# are values, and `tg.debug.detect_anomaly()` is the tool that finds where they start.
# The filter only matches warnings raised from code in tinygrad_edu.core.ops.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tinygrad_edu\.core\.ops\.")
