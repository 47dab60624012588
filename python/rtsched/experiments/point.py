"""One point of an experiment: the evaluator's input, its id (a hash of its parameters) and its
seed (derived from the base seed and the generator inputs only, docs/experiments.md)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .fields import canonical_json, format_duration_ns

SEED_DERIVATION = "rtsched-seed-v1"


@dataclass(frozen=True)
class Point:
    """One sweep point: the evaluator's input (``params``) and its grid coordinates."""

    id: str
    params: dict
    coords: dict

    @property
    def json(self) -> str:
        return canonical_json(self.params)

    @property
    def seed(self) -> int:
        return self.params["seed"]

    @property
    def count(self) -> int:
        return self.params["count"]

    @property
    def label(self) -> str:
        """The point's grid coordinates in words (the ones it has), e.g. ``m=8 n=16 U=7.5 epsilon=0ns``."""
        c = self.coords
        out = [f"{k}={c[k]}" for k in ("m", "n") if k in c]
        if "util" in c:
            out.append(f"U={c['util']:g}")
        if "window" in c:
            out.append(f"window=[{c['window'][0]:g}, {c['window'][1]:g}]")
        if "epsilon" in c:
            out.append(f"epsilon={format_duration_ns(c['epsilon'])}")
        return " ".join(out)


def derive_seed(base_seed: int, generator: dict, n: int, m: int, util: float) -> int:
    """The seed of a point: SHA-256 over the base seed and the generator inputs, top 63 bits."""
    key = canonical_json(
        {
            "v": SEED_DERIVATION,
            "seed": base_seed,
            "generator": generator["name"],
            "periods": generator["periods"],
            "umax": generator["umax"],
            "deadlines": generator["deadlines"],
            "n": n,
            "m": m,
            "util": util,
        }
    )
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def point_id(params: dict) -> str:
    return hashlib.sha256(canonical_json(params).encode()).hexdigest()[:16]
