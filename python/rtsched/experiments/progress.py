"""A progress line on stderr: points done/total, task sets per second, ETA.

On a terminal the line is redrawn in place (at most 10 times a second); otherwise (a log file, a
batch job) a full line is printed every ``interval`` seconds and once at the end.
"""

from __future__ import annotations

import sys
import time


def _fmt_time(s: float) -> str:
    if s != s or s == float("inf"):
        return "?"
    s = int(round(s))
    h, r = divmod(s, 3600)
    m, s = divmod(r, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    def __init__(
        self,
        total_points: int,
        total_sets: int,
        done_points: int = 0,
        done_sets: int = 0,
        stream=None,
        interval: float = 30.0,
        label: str = "sweep",
        enabled: bool = True,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total_points, self.total_sets = total_points, total_sets
        self.points, self.sets = done_points, done_sets
        self.start_sets = done_sets
        self.t0 = self.last = time.monotonic()
        self.interval = interval if not self.tty else 0.1
        self.label = label
        self.enabled = enabled

    def line(self) -> str:
        el = time.monotonic() - self.t0
        new = self.sets - self.start_sets
        rate = new / el if el > 0 else 0.0
        eta = (self.total_sets - self.sets) / rate if rate > 0 else float("nan")
        frac = self.points / self.total_points if self.total_points else 1.0
        bar = ""
        if self.tty:
            w = 24
            k = int(frac * w)
            bar = "[" + "#" * k + "." * (w - k) + "] "
        return (
            f"{self.label}: {bar}{self.points}/{self.total_points} points ({100 * frac:.0f}%), "
            f"{rate:,.0f} task sets/s, elapsed {_fmt_time(el)}, ETA {_fmt_time(eta)}"
        )

    def update(self, points: int = 1, sets: int = 0) -> None:
        self.points += points
        self.sets += sets
        now = time.monotonic()
        if self.enabled and now - self.last >= self.interval:
            self.last = now
            self._emit()

    def _emit(self, final: bool = False):
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._emit(final=True)
