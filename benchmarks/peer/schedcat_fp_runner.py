"""Runs SchedCAT's global fixed-priority tests on task sets in the peer format (ours, not SchedCAT's).

    python benchmarks/peer/schedcat_fp_runner.py SCHEDCAT_DIR TEST SETS_FILE

``SCHEDCAT_DIR`` holds SchedCAT's ``schedcat/sched/fp/bertogna.py`` and ``guan.py`` (run under
Python 3 with the compatibility edits of docs/performance.md, "SchedCAT peer"); ``TEST`` is
``gfp_bc`` (``bertogna.is_schedulable(..., dont_use_slack=True)``), ``gfp_bc_slack``
(``bertogna.is_schedulable``) or ``gfp_guan`` (``guan.is_schedulable``). ``SETS_FILE`` has one
set per line, ``m C_1 D_1 T_1 S_1 C_2 D_2 T_2 S_2 ...`` (integer ns; ``S`` is ignored here).
Tasks are ordered deadline-monotonically, ties by index (rtsched's ``gfp_*`` order), since
SchedCAT's tests take the list in priority order. Prints one verdict (1/0) per set, then
``cpu_us_total X``: the process CPU time spent inside the tests, parsing excluded.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace


def main() -> None:
    root, test, path = sys.argv[1:4]
    sys.path.insert(0, root)
    from schedcat.sched.fp import bertogna, guan  # type: ignore[import-not-found]

    runs = {
        "gfp_bc": lambda m, ts: bertogna.is_schedulable(m, ts, dont_use_slack=True),
        "gfp_bc_slack": lambda m, ts: bertogna.is_schedulable(m, ts),
        "gfp_guan": lambda m, ts: guan.is_schedulable(m, ts),
    }
    run = runs[test]
    sets = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            x = [int(v) for v in line.split()]
            m, rest = x[0], x[1:]
            tasks = [(rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 4)]
            order = sorted(range(len(tasks)), key=lambda i: (tasks[i][1], i))
            sets.append((m, [tasks[i] for i in order]))
    total = 0.0
    out = []
    for m, tasks in sets:
        ts = [SimpleNamespace(cost=c, deadline=d, period=t) for c, d, t in tasks]
        t0 = time.process_time()
        ok = run(m, ts)
        total += time.process_time() - t0
        out.append("1" if ok else "0")
    print("\n".join(out))
    print(f"cpu_us_total {total * 1e6:.3f}")


if __name__ == "__main__":
    main()
