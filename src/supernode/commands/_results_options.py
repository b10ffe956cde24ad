"""Options of the commands that read benchmark outputs (compare, calibrate, import results):
one definition each, so the three read the same files the same way."""

from __future__ import annotations

from typing import Annotated

import typer

RunsCluster = Annotated[str, typer.Option(
    "--cluster", help="Cluster file or preset the runs used.")]
UnsaidOp = Annotated[str | None, typer.Option(
    "--op", help="Collective, for outputs that do not say.")]
UnsaidRanks = Annotated[int | None, typer.Option(
    "--ranks", help="Ranks, for outputs that do not say.")]
RanksPerDomain = Annotated[int | None, typer.Option(
    "--ranks-per-domain", help="Job ranks per scale-up domain (default: hosts split evenly "
    "over the fewest domains).")]
TimingPlacement = Annotated[str, typer.Option(
    "--placement", help="out_of_place or in_place timings.")]
