"""The reproductions of the figure registry: one module per reproduced figure or table.

A module names its spec (``SPEC``, a TOML file in ``rtsched/experiments/specs/``), describes
itself in one line (``DESCRIPTION``) and holds its glue:

- ``parse(text, path=None, quick=False, override=None)`` -> the spec object the one runner
  (``rtsched.experiments.sweep.run_sweep``) runs: a sweep's ``Spec`` or a simulation's
  ``SimSpec``, which carries its evaluator (a module-level ``evaluate_point``, so that worker
  processes can import it) and the schema of its point files;
- ``report(spec, out, run, fmt)`` -> the figure, CSV and tables drawn from the finished points;
- ``KIND``: ``None`` for a schedulability sweep (``_sweep``), else the ``kind`` its TOML
  carries (a simulation reproduction, ``_sim``).

The registry (``rtsched.experiments.registry.REPRODUCTIONS``) lists the modules, one line each;
docs/experiments.md says how to add one.
"""
