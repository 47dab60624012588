"""The reproductions of the figure registry: one module per reproduced figure or table.

Every module is a ``rtsched.experiments.reproduction.Reproduction`` (the one protocol): it
describes itself in one line (``DESCRIPTION``), names its spec (``SPEC``, a TOML file in
``rtsched/experiments/specs/``) and its ``KIND`` (``None`` for a schedulability sweep, ``_sweep``;
else the ``kind`` its TOML carries), parses the spec into the object the one runner
(``rtsched.experiments.sweep.run_sweep``) runs (``parse``: a sweep's ``Spec`` or a simulation's
``_sim.SimSpec``, which names its module-level ``evaluate_point``), and draws its tables and
figure (``summarize``, ``figure``, ``csv_files``; ``reproduction.report``, written once, writes
them). The plain schedulability sweeps are drawn by their ``[plot]`` table instead
(``reproduction.SweepReproduction``, ``_sweep.report``).

The registry (``rtsched.experiments.registry.REPRODUCTIONS``) lists the modules, one line each,
and mypy checks each against its protocol; docs/reproductions.md ("Adding a reproduction") shows
the whole of a small one. Each declares its spec's keys (``KEYS``, ``fields.read_keys``). A
paper's artefact reproduced both in the simulator and on threads is one package with ``ENGINES``
(engines.py: ``rtws_tables/``, ``spres_table1/``).
"""
