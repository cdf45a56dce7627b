"""Entry point of ``make bench``."""

import sys

print("no benchmarks yet", file=sys.stderr)
