"""Brandenburg & Gül, RTSS 2016, Fig. 3: the fraction of task sets placed by partitioning,
semi-partitioning, + PAF and + PAF + RP versus U, for m = 8 and nine task counts n (one curve
per n). The spec (``specs/spres-fig3.toml``) holds the grid, the methods and the panels."""

from ._sweep import KEYS, KIND, parse, report  # noqa: F401

DESCRIPTION = "Brandenburg & Gül, RTSS 2016, Fig. 3: fraction of task sets placed vs. U, m = 8, per n"
SPEC = "spres-fig3.toml"
