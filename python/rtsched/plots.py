"""Plots drawn like the seeds' figures (matplotlib, no display needed)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .output import save_figure  # noqa: E402

LABELS = {
    "gfb": "GFB",
    "bak": "BAK",
    "bcl": "BCL",
    "bcl_iterative": "BCL-iterative",
    "rta": "RTA",
    "bar": "BAR",
    "ffdbf": "FF-DBF",
    "gedf": "G-EDF (any test)",
    "pedf_ffd": "P-EDF (FFD)",
    "spres": "SP-RES (cascade)",
}


def acceptance_plot(utils, fractions: dict, path: str, title: str = "", m: int | None = None) -> None:
    """One curve per method: fraction of schedulable task sets versus total utilization."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    markers = "os^vD<>ph*x+"
    for i, (name, ys) in enumerate(fractions.items()):
        ax.plot(utils, ys, marker=markers[i % len(markers)], markersize=3, linewidth=1.2, label=LABELS.get(name, name))
    ax.set_xlabel("total utilization U" + (f" (m = {m})" if m else ""))
    ax.set_ylabel("fraction of schedulable task sets")
    ax.set_ylim(-0.02, 1.02)
    if m:
        ax.set_xlim(0, m)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=130)
    finally:
        plt.close(fig)
