"""Long Rust calls stop on Ctrl-C: `rtsched analyze` of a 20,000-task set (its default tests run
for minutes: the FP partitioning and the response-time tests; the SRT test took over 300 s
before it was made linear) ends with exit 130 and one line, no traceback. The wait for the
process is a hang guard, not a timing assertion."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest


def big_set(path, n=20_000, m=8, seed=1):
    rng = random.Random(seed)
    tasks = []
    for _ in range(n):
        t = rng.randint(10_000_000, 100_000_000)
        tasks.append({"wcet": max(1, int(0.9 * m / n * t * rng.uniform(0.5, 1.5))), "period": t})
    path.write_text(json.dumps({"m": m, "tasks": tasks}))


def started(pid: int) -> bool:
    """The analysis has started once the process runs a second thread (the Rust worker pool;
    the interpreter and the CLI's imports start none)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_analyze_of_a_big_set_stops_on_ctrl_c(tmp_path):
    f = tmp_path / "big.json"
    big_set(f)
    p = subprocess.Popen(
        [sys.executable, "-m", "rtsched", "analyze", str(f)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal would deliver it, even when pytest itself runs with it ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        guard = time.monotonic() + 120
        while not started(p.pid) and p.poll() is None and time.monotonic() < guard:
            time.sleep(0.05)
        assert p.poll() is None, f"analyze ended before Ctrl-C: {p.communicate()}"
        time.sleep(0.5)  # well inside the tests
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=120)  # hang guard only
        except subprocess.TimeoutExpired:
            pytest.fail("rtsched analyze did not stop within 120 s of Ctrl-C")
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, err
    # One line: "interrupted", with how many sets finished (their results are kept).
    assert err.strip().startswith("rtsched analyze: interrupted") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and out == ""
