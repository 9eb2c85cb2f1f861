"""The primitive ops, one class each (see elementwise, reduce, movement, linalg)."""
