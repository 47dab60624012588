"""Li, Chen, Agrawal, Lu & Gill, ECRTS 2014: federated scheduling against the global-EDF
capacity-augmentation tests on sets of implicit-deadline DAG tasks, acceptance ratio versus the
total utilization as a fraction of m (one panel per m). The spec (``specs/dag-li2014.toml``) holds
the DAG generator, the grid and the methods (``"@dag"``: every DAG test of the core's table)."""

from ._sweep import KEYS, KIND, parse, report  # noqa: F401

DESCRIPTION = "Li, Chen, Agrawal, Lu & Gill, ECRTS 2014: federated vs. global EDF on DAG tasks, acceptance vs. U/m"
SPEC = "dag-li2014.toml"
