"""``rtsched calibrate``: measure this machine's timer floor and scheduling noise for the trust
verdict of runs (:mod:`rtsched.calibrate`; docs/runtime.md, "Trustworthy timing")."""

from __future__ import annotations

import argparse
import json

from .. import validate as v


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="measure this machine's timer floor and scheduling noise for the runs' trust verdict",
        description="Measure how late this machine's timers wake a thread and how long it takes a busy thread's "
        "CPU away when nothing disturbs it (the median over five windows of each window's maximum, at SCHED_FIFO "
        "where permitted), and keep the result in $XDG_CACHE_HOME/rtsched/machine.json (default "
        "~/.cache/rtsched/machine.json), keyed by host name, kernel release and CPU model. `rtsched run` judges "
        "its timing against it (and measures it once, in 0.5 s, when none is kept; --no-calibrate skips that). "
        "A calibration above 1 ms (a busy machine) is not kept. --show prints the kept one without measuring.",
    )
    p.add_argument(
        "--budget",
        type=v.cli_duration("s"),
        default="1s",
        help="how long to measure, 10ms to 60s (default 1s)",
    )
    p.add_argument("--show", action="store_true", help="print the kept calibration; measure nothing")
    p.add_argument("--json", action="store_true", help="print the calibration as JSON")
    p.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .. import calibrate as c
    from .._core import RtschedError

    if args.show:
        cal, note = c.load()
        if cal is None:
            raise RtschedError(f"no calibration of this machine: {note}; run `rtsched calibrate`")
        print(json.dumps(cal, indent=1) if args.json else f"{c.describe(cal)}\nkept in {note}")
        return 0
    cal = c.measure(args.budget)
    if c.disturbed(cal):
        print(json.dumps(cal, indent=1) if args.json else c.describe(cal))
        raise RtschedError(
            f"the calibration was disturbed (a floor above {c.CAP_NS / 1e6:g} ms): not kept; rerun on a quiet machine"
        )
    path = c.save(cal)
    print(json.dumps(cal, indent=1) if args.json else f"{c.describe(cal)}\nkept in {path}")
    return 0
