"""Brandenburg & Gül, RTSS 2016, Fig. 6: the mean per-core context-switch-rate bound of the
placed task sets versus U, m = 8, one panel per n (the paper's RUN and QPS curves are absent:
rtsched implements neither). The spec (``specs/spres-fig6.toml``) holds the grid and the plot."""

from ._sweep import KEYS, KIND, parse, report  # noqa: F401

DESCRIPTION = "Brandenburg & Gül, RTSS 2016, Fig. 6: context-switch-rate bound per core vs. U, m = 8"
SPEC = "spres-fig6.toml"
