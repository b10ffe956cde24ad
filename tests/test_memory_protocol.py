"""The protocol simulator runs MSI, MESI and MOESI, and its message count is the analytic
coherence cost's (a differential test, issue 28 item 3 against item 4).

The analytic directory (:class:`LineDirectory`, ``forwarding="home"``: every transfer from
an owner through the home, as the simulator does it) replayed over the same accesses:

* sequential patterns (each access finishes before the next is issued): equal, exactly
  (seeded ones, and any pattern hypothesis draws);
* concurrent seeded runs, replayed in the order the operations completed (the order the
  blocking home serialised them): equal, exactly;
* a random sharing pattern against :func:`sharing_cost` drawn independently with the same
  units, lines, write fraction and length: within 8 % (measured: at most 5.4 % over
  100 seeds per pattern; the two draw different random accesses).

Also the protocol's own behaviour (E's silent upgrade, MOESI's owner kept in O) and the
checker's acceptance under MESI and MOESI (the protocol ``memory check`` runs for a
cluster): no false alarm, every fault caught on >= 99 % of 1,000 runs at 4 units.
"""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.memory.checker import check
from supernode.memory.coherence import LineDirectory, sharing_cost
from supernode.memory.consistency import check_coherence
from supernode.memory.program import Op, make_program
from supernode.memory.sim import FAULTS, POLICIES, PROTOCOLS, simulate

GAP_S = 1e-3   # between two accesses of a sequential pattern: far above any miss (µs)


def _sequential(seed: int, units: int, n: int, lines: int) -> list[Op]:
    """``n`` accesses, one every ``GAP_S``, each by a seeded unit to a seeded line."""
    rng = random.Random(seed)
    ops, value, last = [], 0, {}
    for g in range(n):
        unit, line, write = rng.randrange(units), rng.randrange(lines), rng.random() < 0.4
        value += write
        ops.append(Op(g, unit, "w" if write else "r", line, value if write else 0,
                      g * GAP_S - last.get(unit, 0.0)))
        last[unit] = g * GAP_S
    return ops


def _uniform(seed: int, units: int, per_unit: int, lines: int, write_fraction: float
             ) -> list[Op]:
    """Concurrent programs: each unit ``per_unit`` accesses to uniform lines."""
    rng = random.Random(seed)
    ops, value = [], 0
    for unit in range(units):
        for _ in range(per_unit):
            write = rng.random() < write_fraction
            value += write
            ops.append(Op(len(ops), unit, "w" if write else "r", rng.randrange(lines),
                          value if write else 0, rng.expovariate(1e6)))
    return ops


def _analytic(ops: list[Op], protocol: str, order, policy: str = "invalidate") -> int:
    """Messages of the analytic directory over ``ops`` taken in ``order``."""
    dirs: dict[int, LineDirectory] = {}
    total = 0
    for op in sorted(ops, key=order):
        d = dirs.setdefault(op.line, LineDirectory(protocol, policy, "home"))
        total += d.access(op.unit, op.kind == "w")[0]
    return total


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sequential_patterns_cost_exactly_the_analytic_messages(protocol, policy):
    for seed in range(8):
        ops = _sequential(seed, units=4, n=60, lines=3)
        run = simulate(ops, 4, 3, seed, protocol=protocol, policy=policy)
        assert not check(run)
        assert run.messages == _analytic(ops, protocol, lambda o: o.index, policy), seed


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_concurrent_runs_in_completion_order_cost_exactly_the_analytic_messages(protocol):
    for seed in range(150):
        units = 2 + seed % 7
        ops = make_program(seed, units, 10, 2, 1e-6)
        run = simulate(ops, units, 2, seed, protocol=protocol)
        assert not check(run), seed
        end = {r.index: r.end for r in run.history}
        assert run.messages == _analytic(ops, protocol, lambda o, end=end: end[o.index]), seed


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_concurrent_update_runs_in_home_order_cost_exactly_the_analytic_messages(protocol):
    # under write-update no write removes a copy, and the home serves a read from its own
    # memory before the writer's UpdDone lands: the home's order (misses and writes when
    # their home began them, hits when issued) is the order, not completion
    for seed in range(150):
        units = 2 + seed % 7
        ops = make_program(seed, units, 10, 2, 1e-6)
        run = simulate(ops, units, 2, seed, protocol=protocol, policy="update")
        assert not check(run), seed
        position = {index: n for n, index in enumerate(run.ordered)}
        key = {r.index: (run.ordered.get(r.index, r.start), position.get(r.index, -1))
               for r in run.history}
        assert run.messages == _analytic(ops, protocol, lambda o, key=key: key[o.index],
                                         "update"), seed


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("units, lines, write_fraction", [(2, 4, 0.3), (4, 4, 0.3),
                                                          (8, 8, 0.5), (4, 16, 0.1)])
def test_random_sharing_patterns_within_eight_percent(protocol, units, lines,
                                                      write_fraction):
    messages = accesses = 0
    analytic = []
    for seed in range(60):
        ops = _uniform(seed, units, 50, lines, write_fraction)
        messages += simulate(ops, units, lines, seed, protocol=protocol).messages
        accesses += len(ops)
        analytic.append(sharing_cost(units, write_fraction, 128, lines * 128,
                                     protocol=protocol, forwarding="home",
                                     samples=len(ops), seed=seed).messages_per_access)
    assert messages / accesses == pytest.approx(statistics.mean(analytic), rel=0.08)


def _one_by_one(accesses: list[tuple[int, str, int]]) -> list[Op]:
    """Sequential accesses (unit, kind, line) to one line, writes numbered 1, 2, ..."""
    ops, value, last = [], 0, {}
    for g, (unit, kind, line) in enumerate(accesses):
        value += kind == "w"
        ops.append(Op(g, unit, kind, line, value if kind == "w" else 0,
                      g * GAP_S - last.get(unit, 0.0)))
        last[unit] = g * GAP_S
    return ops


def test_exclusive_grant_and_silent_upgrade():
    # read then write by one unit: MSI pays GetS + Data + GetM + Data; MESI's E grant
    # lets the write upgrade silently
    ops = _one_by_one([(0, "r", 0), (0, "w", 0)])
    assert simulate(ops, 2, 1, 0, protocol="msi").messages == 4
    assert simulate(ops, 2, 1, 0, protocol="mesi").messages == 2
    assert simulate(ops, 2, 1, 0, protocol="moesi").messages == 2


def test_moesi_owner_keeps_the_dirty_line():
    # a write, then two readers: under MESI the first read writes the line back and the
    # second is served by the home (2); under MOESI the owner kept it in O, so the second
    # reader's request is recalled from it again (4): 2 + 4 + 2 against 2 + 4 + 4
    ops = _one_by_one([(0, "w", 0), (1, "r", 0), (2, "r", 0)])
    mesi = simulate(ops, 3, 1, 0, protocol="mesi")
    moesi = simulate(ops, 3, 1, 0, protocol="moesi")
    assert (mesi.messages, moesi.messages) == (8, 10)
    assert [r.value for r in moesi.history if r.kind == "r"] == [1, 1]
    assert not check(mesi) and not check(moesi)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fault", ["lost-invalidation", "delayed-invalidation"])
def test_an_owner_that_is_the_only_other_holder_is_exposed_to_the_fault(protocol, fault):
    # unit 1 writes, unit 2 reads (MOESI: 1 keeps the dirty line in O, so when 2 writes
    # the only other copy is the owner's, no sharer), unit 2 writes, unit 1 reads; the
    # home (unit 0) holds no copy. Every protocol must show the defect in the trace.
    ops = _one_by_one([(1, "w", 0), (2, "r", 0), (2, "w", 0), (1, "r", 0)])
    assert not check(simulate(ops, 3, 1, 0, protocol=protocol))
    kinds = {v.kind for v in check(simulate(ops, 3, 1, 0, fault, protocol=protocol))}
    assert "swmr" in kinds


def test_update_keeps_every_copy_valid_and_a_lost_update_is_caught():
    # unit 1 and unit 2 read, unit 1 writes: under update unit 2's copy takes the value
    # (its next read hits and returns it: GetS+Data twice, GetU+Upd+UpdAck+UpdDone, 0);
    # with the Upd to unit 2 lost, its copy keeps 0 after the write is done
    ops = _one_by_one([(1, "r", 0), (2, "r", 0), (1, "w", 0), (2, "r", 0)])
    run = simulate(ops, 3, 1, 0, protocol="msi", policy="update")
    assert not check(run) and run.messages == 2 + 2 + 4
    assert [r.value for r in run.history if r.unit == 2] == [0, 1]
    lost = simulate(ops, 3, 1, 0, "lost-invalidation", protocol="msi", policy="update")
    assert [r.value for r in lost.history if r.unit == 2] == [0, 0]
    assert {v.kind for v in check(lost)} == {"data-value", "linearizability"}


def test_unknown_protocol_is_refused():
    with pytest.raises(ValueError, match="protocol"):
        simulate([], 2, 1, 0, protocol="mosi")
    with pytest.raises(ValueError, match="policy"):
        simulate([], 2, 1, 0, policy="write-back")


@pytest.mark.parametrize("protocol", ["mesi", "moesi"])
def test_checker_acceptance_under_mesi_and_moesi(protocol):
    false = [s for s in range(2000) if not check_coherence(
        s, 2 + s % 7, None, minimise=False, protocol=protocol).consistent]
    assert false == []
    for fault in FAULTS:
        caught = sum(not check_coherence(s, 4, fault, minimise=False,
                                         protocol=protocol).consistent for s in range(1000))
        assert caught >= 990, (fault, caught)


@settings(max_examples=60, deadline=None)
@given(protocol=st.sampled_from(PROTOCOLS), policy=st.sampled_from(POLICIES),
       accesses=st.lists(st.tuples(st.integers(0, 3), st.sampled_from("rw"),
                                   st.integers(0, 2)), min_size=1, max_size=30))
def test_any_sequential_pattern_costs_the_analytic_messages(protocol, policy, accesses):
    ops = _one_by_one(accesses)
    run = simulate(ops, 4, 3, 0, protocol=protocol, policy=policy)
    assert not check(run)
    assert run.messages == _analytic(ops, protocol, lambda o: o.index, policy)
