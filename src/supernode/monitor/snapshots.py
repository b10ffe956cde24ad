"""Prometheus text snapshots into a series store, with times and limits.

Times: either every kept sample carries its own timestamp (ms; the snapshot's time is its
latest), or none does and snapshot ``k`` (in the order given) is taken ``k * interval``
after the first; a mix is refused. Series absent from a later snapshot are not marked
stale (Prometheus does not mark series with explicit timestamps either): they age out
after the 5-minute lookback. With a cluster, the generated topology info series are added
at every snapshot time, as if scraped with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import path_kind, read_text_file
from supernode.monitor.context import INFO_METRICS
from supernode.monitor.exposition import Limits, Snapshot, parse_exposition
from supernode.monitor.infometrics import info_series
from supernode.monitor.pack import RulePack
from supernode.monitor.storage import Storage, make_labels

#: Largest snapshot file (bytes), snapshots per run, and kept samples over all of them. A
#: kept sample costs about 850 bytes of memory (labels, time, value, the series index):
#: 1,000,000 samples peak at 843 MiB, so the limit keeps a run under 2 GiB (5,000,000 went
#: past 4 GiB).
MAX_SNAPSHOT_BYTES = 64 * 2**20
MAX_SNAPSHOTS = 10_000
MAX_SAMPLES = 2_000_000


@dataclass
class LoadedSnapshots:
    """The store, the evaluation times (ms) and what each snapshot held."""

    storage: Storage
    times_ms: list[int]
    snapshots: list[dict[str, object]] = field(default_factory=list)
    skipped_names: dict[str, int] = field(default_factory=dict)
    skipped_samples: int = 0


def read_snapshot(path: str | Path, keep: Callable[[str], bool], limits: Limits) -> Snapshot:
    """Parse one snapshot file (bounded read)."""
    text = read_text_file(path, "SNAPSHOT", MAX_SNAPSHOT_BYTES)
    return parse_exposition(text, str(path), keep, limits)


def _times(parsed: list[Snapshot], interval_s: int) -> list[int]:
    stamped = [s.has_timestamps for s in parsed]
    if any(stamped) and not all(stamped):
        first = parsed[stamped.index(True)].source
        bare = parsed[stamped.index(False)].source
        raise InputError("SNAPSHOT", f"{first} has sample timestamps and {bare} has none; give "
                                     "timestamps in every snapshot or in none")
    if all(stamped) and parsed:
        for snapshot in parsed:
            if any(ts is None for _, _, ts in snapshot.samples):
                raise InputError("SNAPSHOT", f"{snapshot.source}: some samples have "
                                             "timestamps and others not; give all or none")
        return [max(ts for _, _, ts in s.samples if ts is not None) for s in parsed]
    return [k * interval_s * 1000 for k in range(len(parsed))]


def expand_paths(paths: list[str]) -> list[str]:
    """``paths`` with each folder replaced by its ``*.prom`` files in name order."""
    out: list[str] = []
    for path in paths:
        folder = Path(path)
        if path_kind(path) == "dir":  # never raises (a 300-byte name is no folder)
            found = sorted(str(p) for p in folder.glob("*.prom"))
            if not found:
                raise InputError("SNAPSHOT", f"folder {path!r} holds no *.prom files")
            out += found
        else:
            out.append(path)
    return out


def load_snapshots(paths: list[str], pack: RulePack, interval_s: int = 60,
                   limits: Limits = Limits()) -> LoadedSnapshots:
    """Read ``paths`` (files, or folders of ``*.prom`` files) into a store holding only
    the metrics ``pack`` reads."""
    paths = expand_paths(paths)
    if not paths:
        raise InputError("SNAPSHOT", "give at least one snapshot file")
    if len(paths) > MAX_SNAPSHOTS:
        raise InputError("SNAPSHOT", f"{len(paths):,} snapshots; the limit is {MAX_SNAPSHOTS:,}")
    if interval_s <= 0:
        raise InputError("--interval", "must be a positive number of seconds")
    wanted = pack.metrics_read() | set(INFO_METRICS.values())
    parsed, total = [], 0
    for path in paths:
        snapshot = read_snapshot(path, wanted.__contains__, limits)
        total += len(snapshot.samples)
        if total > MAX_SAMPLES:
            raise InputError("SNAPSHOT", f"{path}: more than {MAX_SAMPLES:,} kept samples over "
                                         "all snapshots; give fewer or smaller snapshots")
        parsed.append(snapshot)
    times = _times(parsed, interval_s)
    storage = Storage()
    loaded = LoadedSnapshots(storage, sorted(set(times)))
    for snapshot, t_ms in sorted(zip(parsed, times, strict=True), key=lambda p: p[1]):
        for labels, value, ts in snapshot.samples:
            storage.add(labels, ts if ts is not None else t_ms, value)
        loaded.snapshots.append({"source": snapshot.source, "time_s": t_ms / 1000,
                                 "kept_samples": len(snapshot.samples),
                                 "skipped_samples": snapshot.skipped_samples})
        loaded.skipped_samples += snapshot.skipped_samples
        for name, count in snapshot.skipped_names.items():
            loaded.skipped_names[name] = loaded.skipped_names.get(name, 0) + count
    if pack.ctx.cluster is not None:
        add_topology(storage, pack, loaded.times_ms)
    return loaded


def add_topology(storage: Storage, pack: RulePack, times_ms: list[int]) -> None:
    """The cluster's topology info series, 1 at every time of ``times_ms``."""
    series_by_kind = info_series(pack.ctx.topology, pack.ctx.config)
    count = sum(len(s) for s in series_by_kind.values()) * len(times_ms)
    if count > MAX_SAMPLES:
        raise InputError("--cluster", f"{count:,} topology samples ({len(times_ms):,} snapshots "
                                      f"of the cluster's info series); the limit is "
                                      f"{MAX_SAMPLES:,}: give fewer snapshots")
    for kind, series in series_by_kind.items():
        for labels in series:
            key = make_labels({"__name__": INFO_METRICS[kind], **labels})
            for t_ms in times_ms:
                storage.add(key, t_ms, 1.0)
