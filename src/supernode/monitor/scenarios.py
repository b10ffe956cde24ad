"""Synthetic series that make each rule fire, and near misses that must stay silent.

A :class:`Scenario` is a set of input series (one value per step, ``None`` for a missing
sample, :data:`STALE` for a staleness marker) and :class:`Check` s: at ``eval_time_s``,
exactly the listed alerts of ``alertname`` fire (identified by their labels, as a person
worked them out). The :class:`Kit` builds exporter-like series for units of the real
topology, so the same scenarios test the rules of any cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from supernode.monitor.context import INFO_METRICS, PackContext
from supernode.monitor.infometrics import gpu_labels, host_labels, nic_labels
from supernode.monitor.placement import GpuPlace, HostPlace, NicPlace
from supernode.monitor.promql_syntax import quote

STALE = "stale"
Value = float | None | str


@dataclass(frozen=True)
class InputSeries:
    """One input series: labels (``__name__`` included) and a value per step."""

    labels: tuple[tuple[str, str], ...]
    values: tuple[Value, ...]

    def selector(self) -> str:
        """The series in PromQL notation, as promtool's ``input_series`` wants it."""
        labels = dict(self.labels)
        name = labels.pop("__name__")
        inner = ", ".join(f"{k}={quote(v)}" for k, v in sorted(labels.items()))
        return f"{name}{{{inner}}}"

    def values_text(self) -> str:
        """The values in promtool notation, runs compressed: ``_xN`` is N missing samples,
        ``a+bxN`` is N+1 samples from ``a`` rising by ``b`` (integers only, so promtool's
        running sum is exact), ``stale`` a staleness marker."""
        parts, i, values = [], 0, self.values
        while i < len(values):
            j = i + 1
            if values[i] is None or values[i] == STALE:
                while j < len(values) and values[j] == values[i]:
                    j += 1
                word = "_" if values[i] is None else "stale"
                parts.append(f"_x{j - i}" if word == "_" and j - i > 1 else word)
                if word == "stale":
                    j = i + 1
            else:
                j = _run_end(values, i)
                step = 0.0 if j == i + 1 else _sample(values[i + 1]) - _sample(values[i])
                parts.append(_number(_sample(values[i])) if j == i + 1 else
                             f"{_number(_sample(values[i]))}{_signed(step)}x{j - i - 1}")
            i = j
        return " ".join(parts)


def _sample(value: Value) -> float:
    """The number of a sample that is neither missing nor a staleness marker."""
    if value is None or isinstance(value, str):
        raise ValueError(f"{value!r} is not a sample's number")
    return float(value)


def known(figure: float | None, what: str) -> float:
    """A cluster figure a scenario needs: its rule is generated only when the cluster
    gives it (:class:`PackContext`); ValueError (no scenario) otherwise."""
    if figure is None:
        raise ValueError(f"the cluster gives no {what}")
    return figure


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 2**53 else repr(value)


def _signed(value: float) -> str:
    text = _number(value)
    return text if text.startswith("-") else f"+{text}"


def _run_end(values: tuple[Value, ...], i: int) -> int:
    """End of the longest run from ``i`` that promtool's ``a+bxN`` reproduces exactly."""
    def exact(v: Value) -> bool:
        return isinstance(v, float) and v == int(v) and abs(v) < 2**52
    j = i + 1
    if j >= len(values) or not isinstance(values[j], float):
        return j
    first = values[i]
    step = _sample(values[j]) - _sample(first)
    if step != 0 and not (exact(first) and exact(values[j])):
        return j
    while j < len(values) and isinstance(values[j], float) and \
            values[j] == _sample(first) + step * (j - i) and (step == 0 or exact(values[j])):
        j += 1
    return j


@dataclass(frozen=True)
class Check:
    """At ``eval_time_s``, alerts of ``alertname`` with exactly these label sets fire."""

    eval_time_s: int
    alertname: str
    alerts: tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class Scenario:
    """Input series and checks for one rule; ``long`` scenarios step by the hour."""

    name: str
    interval_s: int
    series: tuple[InputSeries, ...]
    checks: tuple[Check, ...]
    long: bool = False

    @property
    def end_s(self) -> int:
        """The last check time."""
        return max(c.eval_time_s for c in self.checks)


def _frozen(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in labels.items() if v != ""))


@dataclass
class Kit:
    """Builds exporter-like series for units of ``ctx.topology``."""

    ctx: PackContext
    steps: int
    series: list[InputSeries] = field(default_factory=list)

    # Units.
    def gpu(self, index: int) -> GpuPlace:
        """A distinct GPU: the ``index``-th of the cluster (IndexError when the cluster has
        fewer: a scenario never gives two of its units the same GPU)."""
        return self.ctx.topology.gpus[index]

    def host(self, index: int) -> HostPlace:
        """The ``index``-th compute host (IndexError when the cluster has fewer: a scenario
        never gives two of its hosts the same name)."""
        return self.ctx.topology.compute_hosts()[index]

    def gpus_of(self, host: HostPlace) -> list[GpuPlace]:
        """The GPUs of ``host``."""
        return [g for g in self.ctx.topology.gpus if g.host == host]

    def hosts_sharing(self, parent: str, count: int, spread: str | None = None
                      ) -> tuple[list[HostPlace], HostPlace]:
        """``count`` hosts under one ``parent`` (each under a different ``spread`` parent
        when given) and one host under another ``parent``."""
        hosts = self.ctx.topology.compute_hosts()
        groups: dict[str, list[HostPlace]] = {}
        for host in hosts:
            groups.setdefault(getattr(host, parent), []).append(host)
        for members in groups.values():
            chosen: list[HostPlace] = []
            for host in members:
                if spread is None or all(getattr(h, spread) != getattr(host, spread)
                                         for h in chosen):
                    chosen.append(host)
            if len(chosen) >= count:
                key = getattr(chosen[0], parent)
                other = next(h for h in hosts if getattr(h, parent) != key)
                return chosen[:count], other
        raise ValueError(f"no {parent} holds {count} hosts")

    def nics_sharing_leaf(self, count: int) -> tuple[list[NicPlace], NicPlace]:
        """``count`` NIC ports under one leaf and one under another leaf."""
        nics = self.ctx.topology.nics
        counts: dict[str, int] = {}
        for nic in nics:
            counts[nic.leaf] = counts.get(nic.leaf, 0) + 1
        leaf = max(counts, key=lambda name: (counts[name], name == nics[0].leaf))
        same = [n for n in nics if n.leaf == leaf][:count]
        if len(same) < count:
            raise ValueError(f"no leaf holds {count} NIC ports")
        return same, next(n for n in nics if n.leaf != leaf)

    def nic(self, index: int) -> NicPlace:
        """The ``index``-th scale-out NIC port."""
        return self.ctx.topology.nics[index % len(self.ctx.topology.nics)]

    # Series.
    def add(self, name: str, labels: dict[str, str], values: Sequence[Value]) -> None:
        """Add a series of metric ``name``; ``values`` is padded with its last value."""
        padded = list(values) + [values[-1]] * (self.steps - len(values))
        self.series.append(InputSeries(_frozen({"__name__": name, **labels}),
                                       tuple(_as_value(v) for v in padded[: self.steps])))

    def constant(self, name: str, labels: dict[str, str], value: float) -> None:
        """Add a series holding ``value`` at every step."""
        self.add(name, labels, [value])

    def gpu_ids(self, gpu: GpuPlace) -> dict[str, str]:
        """The identifying labels dcgm-exporter puts on a GPU's series."""
        digest = hashlib.sha1(f"{gpu.host.hostname}/{gpu.gpu}".encode()).hexdigest()[:12]
        return {self.ctx.host: gpu.host.hostname, self.ctx.gpu: str(gpu.gpu),
                "UUID": f"GPU-{digest}", "device": f"nvidia{gpu.gpu}",
                "modelName": self.ctx.given_cluster.accelerator.name}

    def gpu_series(self, key: str, gpu: GpuPlace, values: Sequence[Value], **extra: str
                   ) -> None:
        """A dcgm-exporter series of ``key`` for ``gpu``."""
        self.add(self.ctx.config.metric(key), self.gpu_ids(gpu) | extra, values)

    def host_series(self, key: str, host: HostPlace, values: Sequence[Value], **extra: str
                    ) -> None:
        """A per-host series of ``key``."""
        self.add(self.ctx.config.metric(key), {self.ctx.host: host.hostname} | extra, values)

    def nic_series(self, key: str, nic: NicPlace, values: Sequence[Value]) -> None:
        """A node-exporter infiniband series of ``key`` for ``nic``."""
        labels = {self.ctx.host: nic.host.hostname,
                  self.ctx.config.labels.nic_device: nic.device, "port": "1"}
        self.add(self.ctx.config.metric(key), labels, values)

    # Topology info.
    def info(self, kind: str, labels: dict[str, str]) -> None:
        """The info series of one unit, 1 at every step."""
        self.constant(INFO_METRICS[kind], labels, 1.0)

    def gpu_info(self, *gpus: GpuPlace) -> None:
        """Info series of ``gpus`` (and of their hosts)."""
        config, name = self.ctx.config, self.ctx.topology.cluster
        for gpu in gpus:
            self.info("gpu", gpu_labels(gpu, config, name))

    def host_info(self, *hosts: HostPlace) -> None:
        """Info series of ``hosts``."""
        for host in hosts:
            self.info("host", host_labels(host, self.ctx.config, self.ctx.topology.cluster))

    def nic_info(self, *nics: NicPlace) -> None:
        """Info series of ``nics``."""
        for nic in nics:
            self.info("nic", nic_labels(nic, self.ctx.config, self.ctx.topology.cluster))

    # Expected alert labels.
    def gpu_alert(self, gpu: GpuPlace, **extra: str) -> tuple[tuple[str, str], ...]:
        """Labels of a GPU-level alert: the exporter's ids plus the GPU topology labels."""
        labels = self.gpu_ids(gpu) | gpu_labels(gpu, self.ctx.config, self.ctx.topology.cluster)
        return _frozen(labels | extra)

    def gpu_info_alert(self, gpu: GpuPlace) -> tuple[tuple[str, str], ...]:
        """Labels of an alert on the GPU info series itself."""
        return _frozen(gpu_labels(gpu, self.ctx.config, self.ctx.topology.cluster))

    def nic_alert(self, nic: NicPlace, **extra: str) -> tuple[tuple[str, str], ...]:
        """Labels of a NIC-port alert (exporter ids plus NIC topology labels)."""
        labels = nic_labels(nic, self.ctx.config, self.ctx.topology.cluster) | {"port": "1"}
        return _frozen(labels | extra)

    def scenario(self, name: str, checks: list[Check], interval_s: int = 60,
                 long: bool = False) -> Scenario:
        """The scenario of the series added so far."""
        return Scenario(name, interval_s, tuple(self.series), tuple(checks), long)


def _as_value(value: Value) -> Value:
    if value is None or value == STALE:
        return value
    return float(value)


def ramp(start: float, step: float, count: int) -> list[float]:
    """``count`` values from ``start`` rising by ``step`` (a counter)."""
    return [start + step * i for i in range(count)]


def xid_counter(events: list[int]) -> list[Value]:
    """``DCGM_EXP_XID_ERRORS_TOTAL`` of one (GPU, Xid code): absent until the first error
    (at step ``events[0]``), then the count of errors so far, one more at each step of
    ``events`` (held after the last)."""
    out: list[Value] = [None] * events[0]
    for step in range(events[0], events[-1] + 1):
        out.append(float(sum(1 for e in events if e <= step)))
    return out
