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


@pytest.fixture
def isolate_recorder(monkeypatch):
    """Replaces ``rtsched.protocol.isolated`` by a recorder, so that a test of ``isolate`` never
    touches the host's limits. Returns ``(calls, state)``: ``calls`` gets ``("enter", cpus)``
    and ``("exit",)``; ``state`` is the report the run gets (set its ``changed`` and ``refused``)."""
    import contextlib

    from rtsched import protocol

    calls: list = []
    state: dict = {"changed": [], "refused": []}

    @contextlib.contextmanager
    def fake(cpus, *, root="/", report=None):
        calls.append(("enter", list(cpus)))
        try:
            yield state
        finally:
            calls.append(("exit",))

    monkeypatch.setattr(protocol, "isolated", fake)
    return calls, state
