import os
import subprocess
import sys

import pytest


@pytest.fixture(autouse=True, scope="session")
def _calibration_cache(tmp_path_factory):
    """Runs keep this machine's calibration (rtsched.calibrate) in a folder of the test session,
    not in the user's cache: one calibration per session, the user's own left alone."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture
def cli():
    """Runs the installed `rtsched` command line; returns (exit code, stdout, stderr)."""

    def run(*args, input=None):
        p = subprocess.run(
            [sys.executable, "-m", "rtsched", *map(str, args)], capture_output=True, text=True, input=input, timeout=600
        )
        return p.returncode, p.stdout, p.stderr

    return run
