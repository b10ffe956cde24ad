"""Health monitoring: the seeds' alert thresholds as generated Prometheus rules.

Rules are built once as expression trees (:mod:`~supernode.monitor.promql`), rendered to
the YAML Prometheus loads and evaluated offline on exposition snapshots by the same
semantics (:mod:`~supernode.monitor.engine`). Topology labels (supernode, rack, leaf, power
shelf, CDU) come from the cluster description through a generated info metric.
"""
