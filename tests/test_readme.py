"""The README's promise: its test command is what CI runs, and its commands exist."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in readme, f"README must contain the CI command verbatim: {ci}"


def test_readme_has_exactly_two_setup_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s*(pip install .+)$", quick, flags=re.M)
    assert len(commands) == 2, commands


def tour_commands() -> list[str]:
    """The `$ rtsched ...` lines of the README's five-minute tour, comments cut."""
    readme = (ROOT / "README.md").read_text()
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", tour, flags=re.S)
    assert block, "the tour has no console block"
    return [line[2:].split("  #", 1)[0].strip() for line in block.group(1).splitlines() if line.startswith("$ ")]


#: Tour lines not run here, each with the reason; every other line of the tour runs below.
NOT_RUN = {
    "rtsched run ": "real threads for 2 s (tests/test_run.py)",
    "rtsched generate --m 8 --n 20 --util 5.6 --count 100000": "100,000 sets (tests/test_front_batch.py)",
    "rtsched analyze many.jsonl": "needs the 100,000 sets above",
    "rtsched reproduce spres-fig3 ": "a long sweep (tests/test_simrepro.py)",
    "rtsched reproduce spres-table1 --quick": "a long simulation (tests/test_simrepro.py)",
    "rtsched reproduce spres-table1 --engine threads ": "real threads for a minute (tests/test_spres_runtime_repro.py)",
    "rtsched reproduce sd-push-cost ": "real threads (tests/test_sd_push_cost.py)",
    "rtsched reproduce dag-li2014 ": "a sweep of 600 DAG sets (tests/test_quick_mark.py runs its quick form)",
    "rtsched reproduce rtws-tables --engine threads ": "real threads (tests/test_rtws_runtime.py)",
}


def test_the_tour_runs_from_a_scratch_folder(tmp_path):
    """The tour's commands run, in order, from a folder that is not the clone, with the installed
    package: the examples and overhead models it uses (spres-fig1.json,
    vm-2cpu-protocol, the models of rtss09-hrt) are found from there."""
    import shlex
    import subprocess
    import sys

    commands = tour_commands()
    assert len(commands) >= 15, commands
    for prefix in NOT_RUN:
        assert sum(c.startswith(prefix) for c in commands) == 1, f"NOT_RUN: {prefix!r} is not one line of the tour"
    skipped = {c for c in commands if any(c.startswith(p) for p in NOT_RUN)}
    ran = []
    for c in commands:
        if c in skipped:
            continue
        argv = shlex.split(c.split(" > ", 1)[0])
        assert argv[0] == "rtsched", c
        p = subprocess.run(
            [sys.executable, "-m", "rtsched", *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert p.returncode == 0, f"{c}\n{p.stdout}\n{p.stderr}"
        assert "Traceback" not in p.stderr, c
        ran.append(c)
    assert any("--overheads vm-2cpu-protocol" in c for c in ran)  # a shipped set, by name
    assert any(c.startswith("rtsched partition spres-fig1.json") for c in ran)
    assert any(c.startswith("rtsched reproduce rtss09-hrt --quick") for c in ran)
    assert (tmp_path / "g.png").is_file() and (tmp_path / "set.json").is_file()
    assert not (ROOT / "docs" / "examples" / "ts.json").exists()
