"""`python -m tinygrad_edu ...` runs the `tinygrad-edu` command line."""

import sys

from tinygrad_edu.lesson.cli import main

if __name__ == "__main__":
    sys.exit(main())
