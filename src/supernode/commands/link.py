"""``supernode link [GENERATION] --ber B``: what a bit error rate costs one link.

Without a generation, lists the link generations (docs/links.md) with their drain and
watch BER, raw and effective (post-FEC). With one, prints the link's rates, the frame error
probability, effective bandwidth and the mean, p99 and p99.9 latency retransmissions add to
a message at that BER (raw, pre-FEC; ``--post-fec`` for a residual BER), and the
generation's thresholds.
"""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.links import ber_thresholds, get_generation, link_generations, link_performance


def _list(json_output: bool) -> None:
    rows = []
    for name, gen in link_generations().items():
        t = ber_thresholds(name)
        rows.append({"generation": name, "family": gen.family, "lanes": gen.lanes,
                     "line_rate_gbit_per_s": gen.line_rate_bytes_per_s * 8 / 1e9,
                     "data_rate_gbit_per_s": gen.data_rate_bytes_per_s * 8 / 1e9,
                     "fec": None if gen.fec is None else f"RS({gen.fec.n},{gen.fec.k})",
                     **t.as_dict()})
    if json_output:
        print_json({"generations": rows})
        return
    table = Table(title="link generations (one link, one direction)", title_justify="left")
    for col in ("generation", "lanes", "line Gb/s", "data Gb/s", "FEC", "drain BER", "by",
                "watch BER", "effective drain", "by "):
        table.add_column(col, justify="left" if col in ("generation", "FEC", "by", "by ")
                         else "right")
    for r in rows:
        table.add_row(r["generation"], str(r["lanes"]), f"{r['line_rate_gbit_per_s']:.1f}",
                      f"{r['data_rate_gbit_per_s']:.1f}", r["fec"] or "-",
                      f"{r['drain_pre_fec_ber']:.2g}", r["criterion"],
                      f"{r['watch_pre_fec_ber']:.2g}", f"{r['drain_effective_ber']:.2g}",
                      r["effective_criterion"])
    stdout.print(table)


def _time(seconds: float) -> str:
    """Seconds in the unit that reads best: us below 1 ms, ms below 1 s, else s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


@app.command("link")
@handles_input_errors
def link_command(
    generation: str = typer.Argument(None, help="Link generation (omit to list them)."),
    ber: float = typer.Option(None, "--ber", help="Bit error rate (raw, before the FEC)."),
    post_fec: bool = typer.Option(False, "--post-fec", help="--ber is the post-FEC BER."),
    message_bytes: int = typer.Option(2**20, "--message-bytes",
                                      help="Message whose added latency is reported."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Effective bandwidth and retransmission latency of one link at a bit error rate."""
    if generation is None:
        _list(json_output)
        return
    gen = get_generation(generation, "GENERATION")
    value = 0.0 if ber is None else ber
    perf = link_performance(gen, message_bytes=message_bytes,
                            **({"post_fec_ber": value} if post_fec else {"pre_fec_ber": value}))
    thresholds = ber_thresholds(gen.name)
    if json_output:
        print_json({"performance": perf.as_dict(), "thresholds": thresholds.as_dict(),
                    "sources": list(gen.sources)})
        return
    which = "post-FEC" if post_fec else "raw (pre-FEC)"
    stdout.print(f"{gen.name}: {gen.lanes} lanes, line {perf.line_rate_bytes_per_s * 8 / 1e9:.2f}"
                 f" Gb/s, data {perf.data_rate_bytes_per_s * 8 / 1e9:.2f} Gb/s, goodput "
                 f"{perf.goodput_bytes_per_s * 8 / 1e9:.2f} Gb/s", highlight=False)
    stdout.print(f"at {which} BER {value:.3g}: post-FEC BER {perf.post_fec_ber:.3g}, frame error "
                 f"{perf.frame_error_probability:.3g}, effective "
                 f"{perf.effective_bytes_per_s * 8 / 1e9:.2f} Gb/s "
                 f"({perf.bandwidth_fraction:.4%} of goodput)", highlight=False)
    stdout.print(f"added latency for {perf.message_bytes:,} B ({perf.message_frames:,} frames): "
                 f"mean {_time(perf.added_latency_mean_s)}, p99 "
                 f"{_time(perf.added_latency_p99_s)}, p99.9 "
                 f"{_time(perf.added_latency_p999_s)}; FEC adds "
                 f"{perf.fec_latency_s * 1e9:.0f} ns per frame", highlight=False)
    if perf.tail_timeout_s is not None:
        stdout.print(f"a lost last packet waits the RC timeout, {_time(perf.tail_timeout_s)} "
                     "(NCCL_IB_TIMEOUT 20)", highlight=False)
    stdout.print(f"drain at raw BER {thresholds.drain_pre_fec_ber:.2g} ({thresholds.criterion}),"
                 f" watch from {thresholds.watch_pre_fec_ber:.2g}", highlight=False)
    stdout.print(f"drain at effective (post-FEC) BER {thresholds.drain_effective_ber:.2g} "
                 f"({thresholds.effective_criterion}), watch from "
                 f"{thresholds.watch_effective_ber:.2g}: the levels monitoring compares port "
                 "symbol errors with", highlight=False)
    if gen.assumed:
        stdout.print(f"assumed (no public source): {', '.join(gen.assumed)}", highlight=False)
