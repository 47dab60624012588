"""Brandenburg & Anderson, RTSS 2009, Fig. 3 style plots from measured overhead models: the
average release, scheduling and tick overhead of each G-EDF plugin against the number of tasks
n, one panel per term, one curve per plugin (any m: the models carry theirs).

    python benchmarks/rtss09_fig3.py DIR [--out FIG.png] [--plugins cqm,cem,...]

DIR holds the models written by `rtsched measure-overheads --scheduler P --out DIR` (files
overheads-P*.json; the longest measurement of each plugin is used, as the reproductions do).
A plugin without a model, or a term it does not trace (tick under event-driven plugins), is
left out of that panel and named on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rtsched.overheads import load_models

TERMS = (("release", "(a) release overhead"), ("schedule", "(b) scheduling overhead"), ("tick", "(c) tick overhead"))
PLUGINS = "cqm,s-cqm,cem,fem,hem,cq1,ce1,fe1"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--out", type=Path, default=Path("rtss09-fig3.png"))
    ap.add_argument("--plugins", default=PLUGINS)
    a = ap.parse_args()
    if not a.dir.is_dir():
        print(f"rtss09_fig3: {a.dir}: not a directory", file=sys.stderr)
        return 2
    models, notes = load_models(a.dir)
    for n in notes:
        print(f"rtss09_fig3: {n}", file=sys.stderr)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(TERMS), figsize=(5 * len(TERMS), 4))
    for ax, (term, title) in zip(axes, TERMS, strict=True):
        for p in a.plugins.split(","):
            model = models.get(p)
            t = json.loads(Path(model["path"]).read_text())["terms"].get(term) if model else None
            if not t:
                print(f"rtss09_fig3: {p}: no {term} samples", file=sys.stderr)
                continue
            m = model.get("m", "?")
            ax.plot(t["n"], [v / 1000 for v in t["avg_ns"]], marker="o", label=f"{p} (m={m})")
        ax.set_title(title)
        ax.set_xlabel("number of tasks n")
        ax.set_ylabel("average overhead (µs)")
        ax.legend(fontsize="small")
    fig.suptitle("G-EDF plugins of Brandenburg & Anderson, RTSS 2009 (Fig. 3 style), measured here")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"rtss09_fig3: wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
