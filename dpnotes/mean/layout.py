"""Segment layout: many independent estimation problems in one flat array.

Monte Carlo trials and groups are both "segments": segment ``s`` is the set of records
that one estimator call would see (one group in one trial). Clipping and noise are then
elementwise operations on the flat records plus per-segment reductions, so an experiment
with 50 trials and 300 groups costs a handful of numpy calls per COINPRESS step rather
than 15,000 Python-level estimator calls.

Two layouts share one interface: a *rectangular* one, where every segment has the same
number of records (plain trials, ``x`` of shape ``(trials, n)``), reduced with a reshape
and a sum; and a *ragged* one, where records carry a segment id (groups of different
sizes), reduced with :func:`numpy.bincount`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Layout"]


@dataclass(frozen=True)
class Layout:
    """Where each record goes.

    Attributes:
        n_segments: Number of segments ``S``.
        counts: Records per segment, shape ``(S,)`` (the true counts, private in
            general; only the leaky option and the non-stratified mean with public
            ``n`` use them inside a mechanism).
        seg: Segment id of every flat record, shape ``(N,)``, with ``-1`` for records
            that belong to no segment (e.g. the public half of a split); ``None`` for
            the rectangular layout.
        width: Records per segment in the rectangular layout, else ``None``.
    """

    n_segments: int
    counts: np.ndarray
    seg: np.ndarray | None = None
    width: int | None = None

    @classmethod
    def rectangular(cls, n_segments: int, width: int) -> Layout:
        """Return the layout of ``n_segments`` consecutive runs of ``width`` records."""
        counts = np.full(n_segments, width, dtype=np.int64)
        return cls(n_segments=n_segments, counts=counts, width=width)

    @classmethod
    def ragged(cls, seg: np.ndarray, n_segments: int) -> Layout:
        """Return the layout given each record's segment id (``-1``: none)."""
        seg = np.asarray(seg, dtype=np.int64)
        counts = np.bincount(seg[seg >= 0], minlength=n_segments)
        if np.any(seg < 0):
            # Send unused records to an extra bin that reductions drop, so that the
            # hot loop needs no boolean indexing.
            seg = np.where(seg < 0, n_segments, seg)
        return cls(n_segments=n_segments, counts=counts, seg=seg)

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Sum flat per-record ``values`` within each segment, shape ``(S,)``."""
        if self.seg is None:
            return values.reshape(self.n_segments, self.width).sum(axis=1)
        return np.bincount(self.seg, weights=values, minlength=self.n_segments + 1)[
            : self.n_segments
        ]

    def expand(self, per_segment: np.ndarray) -> np.ndarray:
        """Broadcast a per-segment array to the flat records."""
        if self.seg is None:
            return np.repeat(per_segment, self.width)
        # The extra bin (unused records) gets a harmless value.
        padded = np.append(per_segment, per_segment[:1] if per_segment.size else 0.0)
        return padded[self.seg]

    def clip(self, x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Clip every record to its segment's ``[lower, upper]``."""
        if self.seg is None:
            shaped = x.reshape(self.n_segments, self.width)
            return np.clip(shaped, lower[:, None], upper[:, None]).reshape(-1)
        return np.clip(x, self.expand(lower), self.expand(upper))
