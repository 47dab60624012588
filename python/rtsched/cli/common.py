"""What every command of the ``rtsched`` CLI shares: the parser class with one-line errors, the
``--json``/``-o`` output options and the printing behind them, the sink Rust's batch writers write
to, and the progress line of long runs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``rtsched CMD: error: ...``, no usage block), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_json_output(p: argparse.ArgumentParser, what: str) -> None:
    """The output options every command that has a result object shares: ``--json`` prints it as
    JSON instead of a table; ``-o/--output FILE`` writes the JSON to FILE as well (atomically)."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of a table")
    p.add_argument("-o", "--output", metavar="FILE", help=f"also write {what} as JSON to FILE")


def emit(args: argparse.Namespace, obj: Any, table: Callable[[], str], indent: int | None = None) -> None:
    """Prints ``obj`` as JSON (``--json``) or ``table()``, and writes the JSON to ``-o FILE``."""
    text = json.dumps(obj, indent=indent)
    if getattr(args, "output", None):
        from ..output import write_text

        write_text(args.output, text + "\n")
    print(text if args.json else table())


def stdout_sink() -> int | Callable[[bytes], Any]:
    """Where the Rust batch writers put their output: stdout's file descriptor (written from
    Rust, so that Ctrl-C cannot tear a line), or a function when stdout is not a real file."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return lambda data: sys.stdout.write(data.decode())
    sys.stdout.flush()
    return fd


def progress(label: str, unit: str, quiet: bool) -> tuple[Callable[..., None] | None, Callable[[], None]]:
    """A progress callback (done, total) for long runs (shown after 2 s), and its closer."""
    if quiet:
        return None, lambda: None
    from ..experiments.progress import Progress

    state: dict = {}

    def cb(done, total, sets=None):
        p = state.get("p")
        if p is None:
            p = state["p"] = Progress(total or 0, total or 0, label=label, unit=unit, delay=2.0)
        if sets is not None:  # a file read by bytes: estimate the sets from the bytes done
            p.total_sets = int(sets * total / done) if done else 0
            p.update(0, sets - p.sets)
        else:
            p.total_sets = total or 0
            p.update(0, done - p.sets)

    def close():
        if "p" in state:
            state["p"].close()

    return cb, close
