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
