"""Paired bootstrap intervals: is method A better than method B on the same tasks?"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["paired_interval"]


def paired_interval(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 10_000, seed: int = 23
) -> tuple[float, float, float]:
    """Mean of ``a - b`` over paired tasks and its 95 % percentile bootstrap interval."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if diff.size == 0:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, diff.size, size=(resamples, diff.size))
    means = diff[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(low), float(high)
