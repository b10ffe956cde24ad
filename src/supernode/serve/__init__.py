"""Inference serving on a cluster: prefill and decode priced by the step model's kernels,
KV-cache capacity and sharding, continuous batching, TP/PP/attention-DP/EP deployments,
disaggregated prefill/decode pools, and the search over them (``supernode serve``)."""
