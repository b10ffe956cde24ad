"""The serving stage of the review (``design --serve FILE``): what the cluster's domain
buys for serving the workload against 8-GPU servers of the same chips, at the serve file's
lengths, load and latency targets (:func:`supernode.design.serving_fit.serving_fit`, the
question ``supernode fit --serve`` answers), priced with the review's one price model.

The serve file's model defaults to the reviewed workload and its GPUs to one scale-up
domain of the cluster, at least the 8 GPUs of the baseline (a serving deployment is sized
per domain: the per-GPU figures of a domain are those of the cluster, and the search stays
seconds, not minutes).
``results.json`` -> ``serving`` (null without ``--serve``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.design.prices import server_price
from supernode.design.serving_fit import serving_fit
from supernode.errors import InputError
from supernode.planner.fit import CONVENTIONAL_DOMAIN
from supernode.serve.request import build_request, serve_spec
from supernode.spec.resolved import Cluster


def run_serving(serve: str | Path, workload: str | Path, cluster: Cluster,
                cluster_source: str | Path) -> dict[str, Any]:
    """``results.json`` -> ``serving`` for the serve file ``serve`` on ``cluster``."""
    spec = serve_spec(str(serve), {})
    update: dict[str, Any] = {}
    if spec.model is None:
        update["model"] = str(workload)
    if spec.gpus is None:
        update["gpus"] = max(cluster.scale_up.size, CONVENTIONAL_DOMAIN)
    spec = spec.model_copy(update=update)
    price, premium = server_price(cluster)
    try:
        req = build_request(spec, str(cluster_source), 1, True, price)
        result = serving_fit(req, cluster.spec, (CONVENTIONAL_DOMAIN, cluster.scale_up.size),
                             premium)
    except InputError as exc:
        raise InputError(f"serve.{exc.path}", exc.message, source=str(serve)) from None
    result["serve_file"] = str(serve)
    return result
