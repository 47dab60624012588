import subprocess
import sys

import pytest


@pytest.fixture
def cli():
    """Runs the installed `rtsched` command line; returns (exit code, stdout, stderr)."""

    def run(*args, input=None):
        p = subprocess.run(
            [sys.executable, "-m", "rtsched", *map(str, args)], capture_output=True, text=True, input=input, timeout=600
        )
        return p.returncode, p.stdout, p.stderr

    return run
