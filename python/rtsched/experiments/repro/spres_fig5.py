"""Brandenburg & Gül, RTSS 2016, Fig. 5: the whole SP-RES cascade with minimum slice sizes ε,
m = 8, one panel per n and one curve per ε (every ε tests the same task sets). The spec
(``specs/spres-fig5.toml``) holds the grid and the panels."""

from ._sweep import KEYS, KIND, parse, report  # noqa: F401

DESCRIPTION = "Brandenburg & Gül, RTSS 2016, Fig. 5: the SP-RES cascade with minimum slice size ε, m = 8"
SPEC = "spres-fig5.toml"
