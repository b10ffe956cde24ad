"""Sections: the simulated iteration; the facility."""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Figure, Paragraph, Section, Table
from supernode.report.fig_facility import floor_svg, power_svg
from supernode.report.fig_run import heatmap_svg, hot_links_svg, timeline_svg
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T
from supernode.report.sections_power_cap import power_cap_blocks

SIM = "simulation"
HOT_LINE = 0.8


def simulation_section(r: dict[str, Any]) -> Section:
    """Simulated vs estimated step, utilisation per tier, hot links, heatmap, timeline."""
    s = Section("simulation", "Simulated iteration")
    sim = r[SIM]
    if sim is None:
        s.blocks.append(Paragraph((L("Not simulated (run supernode design without "
                                     "--no-simulate)."),)))
        return s
    s.blocks.append(Paragraph((L("Simulated step "), N(SIM, "step_time_s", kind="s"),
                               L(" against the analytic estimate "),
                               N(SIM, "estimate_step_time_s", kind="s"), L("; "),
                               N(SIM, "events", kind="count"), L(" events, "),
                               N(SIM, "flow_classes", kind="count"), L(" flow classes."))))
    rows = tuple((L(tier), N(SIM, "link_utilization", tier, "links", kind="count"),
                  *(N(SIM, "link_utilization", tier, k, kind="share")
                    for k in ("mean", "p50", "p99", "max", "peak")),
                  N(SIM, "hot_link_counts", tier, kind="count")
                  if tier in sim["hot_link_counts"] else L("-"))
                 for tier in sim["link_utilization"])
    s.blocks.append(Table("Link utilisation per tier (time-averaged; peak is instantaneous)",
                          ("tier", "links", "mean", "p50", "p99", "max", "peak", "hot"), rows))
    hot = tuple((T(SIM, "hot_links", i, "link"), T(SIM, "hot_links", i, "tier"),
                 N(SIM, "hot_links", i, "hot_share", kind="share"),
                 N(SIM, "hot_links", i, "utilization", kind="share"),
                 T(SIM, "hot_links", i, "flows", 0, "label")
                 if sim["hot_links"][i]["flows"] else L("-"))
                for i in range(min(10, len(sim["hot_links"]))))
    if hot:
        s.blocks.append(Table("Hot links (busiest first)", ("link", "tier", "time hot", "mean",
                                                             "main flow"), hot))
    s.blocks += [Paragraph((T(SIM, "notes", i),)) for i in range(len(sim["notes"]))]
    for name, svg, caption in (
            ("heatmap", heatmap_svg(sim, HOT_LINE), "Link utilisation heatmap"),
            ("timeline", timeline_svg(sim), "Timeline grouped by parallel dimension"),
            ("hot-links", hot_links_svg(sim), "Hottest links")):
        if svg:
            s.blocks.append(Figure(name, svg, caption))
    return s


def _kv(title: str, rows: list[tuple]) -> Table:
    return Table(title, ("item", "value"), tuple(rows))


def _power_tables() -> list[Table]:
    """Power and feeds; energy and cost."""
    f = ("facility",)
    p = f + ("power",)
    power = _kv("Power", [
        (L("host (one)"), N(*p, "host", "total_w", kind="w")),
        (L("host figure"), T(*p, "host", "source")),
        (L("rack"), N(*p, "rack", "total_w", kind="w")),
        (L("rack class (seed)"), T(*p, "rack", "rack_class")),
        (L("supernode"), N(*p, "supernode_w", kind="w")),
        (L("fabric switches and optics"), N(*p, "fabric", "total_w", kind="w")),
        (L("cluster at TDP"), N(*p, "cluster_at_tdp_w", kind="w")),
        (L("cluster at the plan's utilisation"), N(*p, "cluster_at_workload_w", kind="w")),
        (L("accelerator busy share"), N(*p, "accelerator_busy_share", kind="share")),
        (L("feeds"), T(*f, "feeds", "scheme")),
        (L("design load (with headroom)"), N(*f, "feeds", "design_load_w", kind="w")),
        (L("each feed sized for"), N(*f, "feeds", "per_feed_capacity_w", kind="w")),
        (L("power available"), N(*f, "feeds", "available_w", kind="w")),
        (L("headroom"), N(*f, "feeds", "headroom", kind="share")),
        (L("PDUs per feed (one rack)"), N(*f, "distribution", "pdus_per_feed", kind="count")),
        (L("distribution recommended"), T(*f, "distribution", "recommended"))])
    e = f + ("energy",)
    energy = _kv("Energy and cost", [
        (L("PUE (stated)"), N(*e, "pue", kind="ratio")),
        (L("facility power at the plan's utilisation"), N(*e, "facility_w", kind="w")),
        (L("energy per step (facility)"), N(*e, "per_step_facility_j", kind="j")),
        (L("energy per million tokens"), N(*e, "per_million_tokens_kwh", kind="kwh")),
        (L("energy cost per million tokens"), N(*e, "cost_per_million_tokens_usd",
                                                kind="usd")),
        (L("energy per year"), N(*e, "annual_mwh", kind="mwh")),
        (L("energy cost per year"), N(*e, "annual_cost_usd", kind="usd"))])
    return [power, energy]


def _site_tables() -> list[Table]:
    """Cooling; floor and cabling."""
    f = ("facility",)
    c = f + ("cooling",)
    cooling = _kv("Cooling", [
        (L("heat to liquid"), N(*c, "liquid_fraction", kind="share")),
        (L("liquid share from"), T(*c, "liquid_fraction_source")),
        (L("liquid heat per rack"), N(*c, "liquid_heat_per_rack_w", kind="w")),
        (L("air heat per rack"), N(*c, "air_heat_per_rack_w", kind="w")),
        (L("room air per rack"), N(*c, "room_air_capacity_per_rack_w", kind="w")),
        (L("coolant"), T(*c, "coolant_name")),
        (L("inlet"), N(*c, "inlet_c", kind="c")), (L("rise"), N(*c, "delta_t_c", kind="c")),
        (L("specific heat (J/kg/K)"), N(*c, "specific_heat_j_per_kg_k", kind="count")),
        (L("density (kg/m³)"), N(*c, "density_kg_per_m3", kind="ratio")),
        (L("flow per rack"), N(*c, "flow_per_rack_l_per_min", kind="l_per_min")),
        (L("flow in all"), N(*c, "flow_total_l_per_min", kind="l_per_min")),
        (L("far-end rise"), N(*c, "far_end_delta_t_c", kind="c")),
        (L("CDUs needed"), N(*c, "cdu", "needed", kind="count")),
        (L("CDUs installed"), N(*c, "cdu", "installed", kind="count"))])
    fl = f + ("floor",)
    floor = _kv("Floor and cabling", [
        (L("racks (compute + network)"), N(*fl, "racks", kind="count")),
        (L("rows"), N(*fl, "rows", kind="count")),
        (L("rack weight"), N(*fl, "rack_weight_kg", kind="kg")),
        (L("weight from"), T(*fl, "weight_source")),
        (L("floor load"), N(*fl, "load_kg_per_m2", kind="kg_per_m2")),
        (L("floor rating"), N(*fl, "rating_kg_per_m2", kind="kg_per_m2")),
        (L("aisles"), N(*fl, "aisle_m", kind="m")),
        (L("floor area"), N(*fl, "area_m2", kind="m2")),
        (L("fibre cores per rack"), N(*f, "cabling", "fibre_cores_per_rack", kind="count")),
        (L("transceivers"), N(*f, "cabling", "transceivers_total", kind="count")),
        (L("cables"), N(*f, "cabling", "cables_total", kind="count"))])
    return [cooling, floor]


def facility_blocks(r: dict[str, Any]) -> list:
    """The facility section's tables and notes (``r["facility"]``): what the section shows
    besides its figures, and what ``supernode facility`` prints."""
    return (_power_tables() + power_cap_blocks(r) + _site_tables()
            + [Paragraph((T("facility", "notes", i),))
               for i in range(len(r["facility"]["notes"]))])


def facility_section(r: dict[str, Any]) -> Section:
    """Power, feeds, energy, cooling, floor and cabling, with two figures."""
    s = Section("facility", "Facility")
    s.blocks += facility_blocks(r)
    s.blocks.append(Figure("power", power_svg(r["facility"]), "Host power by part and a "
                                                              "rack's heat"))
    floor = floor_svg(r["facility"])
    if floor:
        s.blocks.append(Figure("floor", floor, "Rack positions"))
    return s


register_section("simulation", "Simulated iteration", simulation_section)
register_section("facility", "Facility", facility_section)
