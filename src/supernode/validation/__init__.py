"""Validation of the models against published measurements."""
