"""Brandenburg & Gül, RTSS 2016, Fig. 4: the fraction of task sets placed versus U/m for
n = 2m and m in {4, 16, 24}, one panel per m and one curve per strategy. The spec
(``specs/spres-fig4.toml``) holds the grid, the methods and the panels."""

from ._sweep import KEYS, KIND, parse, report  # noqa: F401

DESCRIPTION = "Brandenburg & Gül, RTSS 2016, Fig. 4: fraction of task sets placed vs. U/m, n = 2m, per m"
SPEC = "spres-fig4.toml"
