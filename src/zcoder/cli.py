"""Command-line parsing, mode selection and exit codes; nothing else."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from zcoder import __version__

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder",
        description=(
            "A terminal coding agent for local Ollama models. Several zcoder instances on one "
            "machine can find each other and hand each other work over a private relay."
        ),
    )
    parser.add_argument("-V", "--version", action="version", version=f"zcoder {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    parser.print_help()
    return EXIT_OK
