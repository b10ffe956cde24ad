"""Failure models: component failure rates, interruptions, goodput."""
