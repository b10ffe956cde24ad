"""Schemas of the documents the toolkit reads: cluster, workload, plan."""
