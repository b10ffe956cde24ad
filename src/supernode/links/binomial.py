"""The binomial and negative-binomial functions the link model needs, with
``scipy.stats``' values bit for bit but without importing ``scipy.stats``.

Importing ``scipy.stats`` costs more than half a second, the largest single import of a
design review (``python -X importtime``; the review computes the drain BER of its links).
``scipy.stats.binom`` and ``nbinom`` evaluate ufuncs of ``scipy.special._ufuncs``
(``_binom_pmf``, ``_binom_sf``, ``_nbinom_ppf`` in scipy 1.17) inside the support and
handle its edges themselves; the functions here do the same, which
``tests/test_links.py`` checks against ``scipy.stats`` over the arguments the model
passes. Where scipy lays its ufuncs out otherwise, they are ``scipy.stats``' own methods.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

Function = Callable[[Any, Any, Any], Any]


@cache
def _functions() -> tuple[Function, Function, Function]:
    """``(binomial pmf, binomial sf, negative-binomial ppf)``."""
    try:
        from scipy.special._ufuncs import _binom_pmf, _binom_sf, _nbinom_ppf
    except ImportError:  # another scipy layout: the distribution objects themselves
        from scipy.stats import binom, nbinom

        return binom.pmf, binom.sf, nbinom.ppf

    def pmf(k: Any, n: Any, p: Any) -> Any:
        return np.clip(_binom_pmf(k, n, p), 0.0, 1.0)

    def sf(k: Any, n: Any, p: Any) -> Any:
        return np.where(np.asarray(k) >= np.asarray(n), 0.0,
                        np.clip(_binom_sf(k, n, p), 0.0, 1.0))

    def ppf(q: float, n: Any, p: float) -> Any:
        if not (n > 0 and 0.0 < p <= 1.0) or not 0.0 <= q <= 1.0:
            return np.nan
        if q == 0.0:
            return -1.0
        if q == 1.0:
            return np.inf
        with np.errstate(over="ignore"):  # as scipy.stats (its gh-17432)
            return _nbinom_ppf(q, n, p)

    return pmf, sf, ppf


def binomial_pmf(k: Any, n: Any, p: Any) -> Any:
    """P[X = k] for X ~ Binomial(n, p), elementwise (integers 0 <= k <= n, 0 <= p <= 1):
    ``scipy.stats.binom.pmf``."""
    return _functions()[0](k, n, p)


def binomial_sf(k: Any, n: Any, p: Any) -> Any:
    """P[X > k] for X ~ Binomial(n, p), elementwise (integers 0 <= k <= n, 0 <= p <= 1):
    ``scipy.stats.binom.sf``."""
    return _functions()[1](k, n, p)


def negative_binomial_ppf(q: float, n: Any, p: float) -> Any:
    """The smallest k with P[Y <= k] >= ``q`` for Y ~ NB(n, p), the failures before the
    ``n``-th success of probability ``p`` (scalar ``q`` and ``p``):
    ``scipy.stats.nbinom.ppf`` (-1 at q = 0, infinite at q = 1, NaN outside the domain)."""
    return _functions()[2](q, n, p)
