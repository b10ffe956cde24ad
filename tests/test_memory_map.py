"""The global map, translation, access tiers and membership changes (docs/memory.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.errors import InputError
from supernode.memory.addrmap import build_map, is_bijective, region_table, translate
from supernode.memory.epoch import StaleTranslation, start
from supernode.memory.membership import add_unit, fail_unit, remove_unit
from supernode.memory.model import USED_FRACTION, memory_model
from supernode.memory.translation import translation
from supernode.memory.units import memory_kinds


def test_gb200_nvl72_has_hbm_and_grace_lpddr_in_one_map() -> None:
    kinds = memory_kinds(load_cluster("gb200-nvl72"))
    assert [(k.role, k.name, k.count) for k in kinds] == [("accelerator", "gb200", 72),
                                                          ("cpu", "Grace", 36)]
    assert kinds[0].capacity_bytes == 186e9 and kinds[0].bandwidth_bytes_per_s == 8e12
    assert kinds[1].capacity_bytes == 480e9 and kinds[1].bandwidth_bytes_per_s == 512e9
    regions = region_table(kinds, "by_unit", 4096)
    assert regions[0].start == 0 and regions[1].start == regions[0].end
    # the first byte of the CPU region is Grace 0's local byte 0
    assert translate(regions, regions[1].start, 4096) == ("cpu", 0, 0)
    last = regions[0].end - 1
    assert translate(regions, last, 4096) == ("accelerator", 71, regions[0].unit_bytes - 1)
    with pytest.raises(InputError, match="outside the global space"):
        translate(regions, regions[-1].end, 4096)


def test_interleaved_map_rotates_granules_over_units() -> None:
    kinds = memory_kinds(load_cluster("gb200-nvl72"))
    regions = region_table(kinds, "interleaved", 4096)
    assert translate(regions, 0, 4096) == ("accelerator", 0, 0)
    assert translate(regions, 4096 + 5, 4096) == ("accelerator", 1, 5)
    assert translate(regions, 72 * 4096, 4096) == ("accelerator", 0, 4096)


def test_cloudmatrix_has_two_switch_tiers_and_kunpeng_memory() -> None:
    model = memory_model(load_cluster("cloudmatrix384"))
    tiers = {p.tier for p in model.paths if p.requester == p.target == "ascend-910c"}
    assert tiers == {"local", "same switch", "cross tier"}
    same = next(p for p in model.paths if p.tier == "same switch" and p.target == "ascend-910c"
                and p.requester == "ascend-910c")
    cross = next(p for p in model.paths if p.tier == "cross tier" and p.target == "ascend-910c"
                 and p.requester == "ascend-910c")
    # two more switch traversals each way (L1 -> L2 -> L1): 4 x 300 ns
    assert cross.latency_s - same.latency_s == pytest.approx(4 * 300e-9)
    assert {k.role for k in model.kinds} == {"accelerator", "cpu"}


def test_translation_miss_rate_and_full_map() -> None:
    t = translation(4096, 2**21, 2**40, 16 * 2**30)
    assert t.reach_bytes == 8 * 2**30 and t.miss_rate == pytest.approx(0.5)
    assert t.full_map_entries == 2**19 and t.full_map_bytes == 2**22
    assert translation(4096, 2**21, 2**40, 4 * 2**30).miss_rate == 0.0


def test_churn_closed_form_matches_the_explicit_map() -> None:
    """One unit of 8 leaving moves what it holds; one joining takes an even share."""
    capacity, used = 64, int(64 * USED_FRACTION)
    amap = build_map([capacity] * 8, [used] * 8, "by_unit")
    assert remove_unit(amap, 3).moved_bytes == used * 4096
    joined = add_unit(amap, capacity)
    assert len(joined.moved) == 8 * used // 9
    assert max(joined.after.used()) - min(joined.after.used()) <= 1
    acc = memory_model(load_cluster("gb200-nvl72")).churn
    assert {c.change for c in acc} == {"remove", "fail", "add"}
    assert acc[0].moved_bytes == USED_FRACTION * 186e9


maps = st.tuples(st.integers(2, 6), st.integers(1, 12), st.sampled_from(["by_unit",
                                                                         "interleaved"]))


@settings(max_examples=60, deadline=None)
@given(maps, st.data())
def test_every_address_maps_to_one_place_before_and_after_a_change(shape, data) -> None:
    units, used, mapping = shape
    capacity = used * 2
    amap = build_map([capacity] * units, [used] * units, mapping)
    assert is_bijective(amap)
    change = data.draw(st.sampled_from(["add", "remove", "fail"]))
    unit = data.draw(st.integers(0, units - 1))
    after = (add_unit(amap, capacity) if change == "add" else
             remove_unit(amap, unit) if change == "remove" else fail_unit(amap, unit)).after
    assert is_bijective(after) and after.granules == amap.granules
    if change != "add":
        assert unit not in set(after.owner.tolist())
    # every byte resolves to exactly one (unit, local) and no two bytes share one
    seen = {after.resolve(g * 4096 + 7) for g in range(after.granules)}
    assert len(seen) == after.granules


@settings(max_examples=60, deadline=None)
@given(maps, st.integers(0, 5))
def test_no_access_after_the_fence_resolves_to_the_old_owner(shape, victim) -> None:
    units, used, mapping = shape
    amap = build_map([used * 2] * units, [used] * units, mapping)
    victim %= units
    change = remove_unit(amap, victim)
    table = start(amap)
    table.freeze(change.moved)
    table.publish(change.after)
    for granule in range(amap.granules):
        address = granule * 4096
        with pytest.raises(StaleTranslation):
            table.resolve(address, epoch=0)      # an old translation is refused
        owner, _ = table.resolve(address, epoch=1)
        assert owner != victim
        if granule in change.moved:
            assert owner != amap.owner[granule]


def test_without_the_fence_old_translations_reach_the_old_owner() -> None:
    amap = build_map([8] * 3, [4] * 3, "by_unit")
    change = remove_unit(amap, 0)
    table = start(amap)
    table.publish(change.after, fence=False)
    assert table.resolve(0, epoch=0)[0] == 0     # the stale owner: what the fence prevents


def test_memory_block_in_a_cluster_file_overrides_and_is_checked(tmp_path) -> None:
    text = (load_cluster("gb200-nvl72").spec.model_dump_json(exclude_none=True))
    import json

    doc = json.loads(text)
    doc["memory"] = {"mapping": "interleaved", "units": [
        {"unit": "cpu", "capacity_gbyte": 240, "global_space": False}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    model = memory_model(load_cluster(path))
    assert [r.role for r in model.regions] == ["accelerator"]
    assert model.kinds[1].capacity_bytes == 240e9
    doc["memory"] = {"units": [{"unit": "fpga"}]}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"memory.units\[0\].unit"):
        memory_model(load_cluster(path))
    doc["memory"] = {"line_bytes": 100}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="line_bytes"):
        load_cluster(path)


def test_preprocessing_units_bring_their_own_memory_into_the_map(tmp_path) -> None:
    import json

    doc = json.loads(load_cluster("gb200-nvl72").spec.model_dump_json(exclude_none=True))
    doc["host"]["other_units"] = [{"name": "dpu", "kind": "preprocessing", "count": 1,
                                   "memory_gbyte": 32}]
    path = tmp_path / "hetero.json"
    path.write_text(json.dumps(doc))
    model = memory_model(load_cluster(path))
    assert [(r.role, r.units) for r in model.regions] == [("accelerator", 72), ("cpu", 36),
                                                          ("dpu", 18)]
    assert model.kinds[2].capacity_bytes == 32e9
    assert any(p.requester == "dpu" and p.target == "gb200" for p in model.paths)


def test_torus_mean_path_pays_a_link_latency_per_extra_hop() -> None:
    cluster = load_cluster("tpu-v4-pod")
    paths = [p for p in memory_model(cluster).paths if p.tier != "local"]
    near, mean = paths
    assert near.hops == 1 and mean.hops > 1
    link = cluster.scale_up.link_latency_s
    assert mean.latency_s - near.latency_s == pytest.approx(2 * (mean.hops - 1) * link)
