"""What the fuzz suite throws at each command: an argv and the files it needs.

For every parameter of a command (:mod:`fuzz_commands`) a value by its type and by what
its name and help say it takes (a cluster, a workload, a plan, a placement, a traffic or
failure file, a sweep spec, a monitoring config, an NCCL XML, a job trace, an output
folder, ...): plausible values mostly, so that
cases reach the deep code paths, and for up to two parameters per case a hostile one
(hostile text; numbers at the float and integer limits: subnormals, 1e308, inf strings,
2^31/2^53/2^63/2^64; paths; mutated documents from :mod:`fuzz_documents`, attacked
XML and traces from :mod:`fuzz_formats`; failure specs that take down whole tiers). Now and
then an unknown option, a missing value, an extra argument, ``--help`` or a flag given a
value. A case is an ``argv`` and the files it needs, written into a fresh folder.

Hostile classes of the output checks: output folders given as a symlink
(``link-to-dir``), an output that is one of the case's input files, or a folder that
holds one (:data:`AROUND_INPUTS`); the harness checks every input is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fuzz_commands import Command, Param, commands
from fuzz_documents import DATA, TIER_FAILURES, document_text
from fuzz_formats import trace_text, xml_text
from hypothesis import strategies as st

__all__ = ["Case", "commands", "invocation"]

#: Parameters that start or reach external services (a Ray cluster and its address);
#: their own tests cover them.
EXTERNAL_OPTIONS = frozenset({"--ray", "ADDRESS"})

HOSTILE_TEXT = ["", " ", "x", "[/]", "[red]x", "$x^$", "a$b", "a\nb", "\t", "\x1b[31m",
                "²", "٣", "0-10000000000", "1e30", "nan", "inf", "-1", "0", "a" * 300,
                "é" * 130, "../x", "/", "*", "a,b", "a:b", "\\", "'", '"', "%s", "{}",
                "\u2028", "\udcff",  # an undecodable byte of a file name
                "x\ntouch PWNED\n#", "{host:>99999999}", "{cluster.__class__}"]
HOSTILE_INTS = ["0", "1", "-1", "2", "3", "7", "8", "16", "64", "256", "257", "1000",
                "1048577", str(2**31 - 1), str(2**31), str(2**53), str(2**53 + 1),
                str(2**63 - 1), str(2**63), str(2**64), str(-(2**63) - 1), str(10**30), "x",
                "", "1.5", "1e3", "²", " 8", "0x10", "+4"]
HOSTILE_FLOATS = ["0", "-1", "0.5", "1", "1e-300", "1e-320", "4.9e-324", "1e308", "-1e308",
                  "1.7976931348623157e308", "1e999", "nan", "NaN", "inf", "-inf", "+inf",
                  "Infinity", "x", "", "1,5", "15e12", "²", str(2**63), str(2**64)]
CLUSTER_PRESETS = sorted(p.stem for p in (DATA / "clusters").glob("*.yaml"))
WORKLOAD_PRESETS = sorted(p.stem for p in (DATA / "workloads").glob("*.yaml"))
#: Small presets come up more often: most cases should run in well under a second.
SMALL_CLUSTERS = ["hgx-h100", "mi300x-8", "gb200-nvl72", "gb300-nvl72", "trn2-ultraserver"]
SMALL_WORKLOADS = ["llama3-8b", "mixtral-8x7b", "llama3-70b"]


#: What an option takes, by words in its name, metavar or help (first match wins).
ROLES = [
    ("topo", re.compile(r"output of .nvidia-smi", re.I)),
    ("output", re.compile(r"^(--out|--output|--plot)$|\b(write|output folder|folder|"
                          r"directory)\b", re.I)),
    ("xml", re.compile(r"NCCL topology XML", re.I)),
    ("monitor", re.compile(r"Monitoring configuration", re.I)),
    ("trace", re.compile(r"^--trace$", re.I)),
    ("placement", re.compile(r"placement", re.I)),
    ("traffic", re.compile(r"traffic", re.I)),
    ("failures", re.compile(r"^--fail", re.I)),
    ("plan", re.compile(r"^(--plan|--compare)$", re.I)),
    ("cluster", re.compile(r"cluster", re.I)),
    ("workload", re.compile(r"workload", re.I)),
    ("sweep", re.compile(r"^SPEC$|sweep spec", re.I)),
    ("validation", re.compile(r"validation", re.I)),
    ("accelerator", re.compile(r"accelerator", re.I)),
    ("sizes", re.compile(r"^(--sizes|--min-bytes|--max-bytes)$", re.I)),
]


def role(param: Param) -> str | None:
    """What ``param`` takes, guessed from its name and help (None: by its type only)."""
    by_help = param.kind in ("text", "path")  # an int --gpus is no cluster, whatever its help
    for name, pattern in ROLES:
        if pattern.search(param.name) or (by_help and name != "plan"
                                          and pattern.search(param.help)):
            return name
    return None


@dataclass
class Case:
    """One invocation: ``argv`` and the files to create first (name -> bytes; a value of
    ``"fifo"``/``"dir"``/``"symlink:TARGET"`` makes that kind of node instead)."""

    argv: list[str]
    files: dict[str, Any] = field(default_factory=dict)
    #: The files given as inputs (they must be left as they were, whatever the exit).
    inputs: set[str] = field(default_factory=set)


FILE_NAMES = ["in", "[x]", "$a$", "a b", "é", "a" * 240]
OUTPUT_PATHS = ["out", "out/", "new/sub/dir", "x/../y/../../d", "existing-file",
                "existing-dir", "a" * 300, "link-to-file", "fifo", "/dev/null",
                "[/]out", "$x$", "link-to-dir", "link-to-dir/"]
#: How a hostile case points its output at its inputs: the same file, or a folder
#: holding one of them.
AROUND_INPUTS = ["same", "holder"]


@st.composite
def file_value(draw: st.DrawFn, case: Case, kind: str, hostile: bool) -> str:
    """A path to a document of ``kind`` (mutated when ``hostile``), or a special path."""
    special = draw(st.sampled_from(["doc"] * 4 + ["missing", "dir", "fifo", "devzero",
                                                   "long", "empty"])) if hostile else "doc"
    if special == "missing":
        return "no-such-file.yaml"
    if special == "dir":
        case.files["a-dir"] = "dir"
        return "a-dir"
    if special == "fifo":
        case.files["a-fifo"] = "fifo"
        return "a-fifo"
    if special == "devzero":
        return "/dev/zero"
    if special == "long":
        return "b" * 300 + ".yaml"
    if special == "empty":
        case.files["empty.yaml"] = b""
        return "empty.yaml"
    attacked = hostile and draw(st.booleans())
    if kind == "xml":
        suffix, data = draw(xml_text(attacked))
    elif kind == "trace":
        suffix, data = draw(trace_text(attacked))
    else:
        suffix, data = draw(document_text(kind, attacked))
    names = FILE_NAMES if hostile else FILE_NAMES[:1]
    name = f"{draw(st.sampled_from(names))}-{len(case.files)}{suffix}"
    case.files[name] = data
    case.inputs.add(name)
    return name


#: Plausible values by option name (valid inputs reach the deep code paths).
PLAUSIBLE = {
    "--tp": ["1", "2", "4", "8"], "--pp": ["1", "2", "4"], "--dp": [],
    "--cp": ["1", "1", "2"], "--ep": ["1"], "--vpp": ["1"],
    "--micro-batch": ["1", "2"], "--global-batch": ["16", "64", "256", "512"],
    "--gpus": ["8", "16", "64", "256"], "--top": ["1", "3"], "--seed": ["0", "1", "7"],
    "--workers": ["1", "1", "1", "2"], "--zero-stage": ["0", "1"], "--tokens": ["1e12", "15e12"],
    "--days": ["10", "90"], "--headroom": ["0.2", "0.3"], "--ranks": ["2", "8", "64"],
    "--price-per-gpu-hour": ["2.5"], "--supernode-premium": ["0.1", "0.3"],
    "--utilization": ["0.4", "0.5", "plan"], "--nic-speed-gbit-per-s": ["400", "800"],
    "--jobs": ["20", "100", "500"], "--ber": ["1e-12", "2.4e-4", "0.5"],
    "--message-bytes": ["1048576", str(2**40)],
    "--gate-op": ["all_reduce", "all_to_all", "all_gather"],
    "--framework": ["megatron-core", "torchtitan", "llm-foundry", "nemo-automodel"],
    "--power-limit-w": ["500", "700", "100"],
    "--straddle-margin": ["0", "0.1", "0.3"],
    "--shapes": ["memory-tp", "uniform-tp"], "--pricing": ["per-group", "all-split"],
}
#: (No plausible value for free text without named choices: such options are left out
#: of a case unless it is the case's hostile one.)
PLAUSIBLE_BY_KIND = {"int": ["1", "2", "8", "64"], "float": ["0.5", "1", "2", "10"]}


@st.composite
def value_for(draw: st.DrawFn, case: Case, param: Param, hostile: bool) -> str:
    """A command-line value for ``param``: plausible, or hostile when ``hostile``."""
    what = role(param)
    if what == "output":
        path = draw(st.sampled_from(OUTPUT_PATHS)) if hostile else "out"
        if path == "existing-file":
            case.files[path] = b"keep me\n"
        elif path == "existing-dir":
            case.files[path] = "dir"
            case.files[f"{path}/keep.txt"] = b"keep me\n"
        elif path == "link-to-file":
            case.files["target.txt"] = b"keep me\n"
            case.files[path] = "symlink:target.txt"
        elif path == "fifo":
            case.files[path] = "fifo"
        elif path.startswith("link-to-dir"):
            case.files["real-dir"] = "dir"
            case.files["link-to-dir"] = "symlink:real-dir"
        return path
    if what in ("cluster", "workload"):
        presets = CLUSTER_PRESETS if what == "cluster" else WORKLOAD_PRESETS
        small = SMALL_CLUSTERS if what == "cluster" else SMALL_WORKLOADS
        pick = draw(st.sampled_from(["small"] * 6 + ["preset", "file", "file"]
                                    + (["typo", "file"] if hostile else [])))
        if pick == "small":
            return draw(st.sampled_from(small))
        if pick == "preset":
            return draw(st.sampled_from(presets))
        if pick == "typo":
            return draw(st.sampled_from(small)) + draw(st.sampled_from(["x", "[/]", ""]))
        return draw(file_value(case, what, hostile))
    if what == "failures":
        specs = ["switch:leaf/0", "link:leaf/0-spine/1", "switch:scale_up_l1/0/1",
                 "slow:link:acc/0-scale_up_l1/0/0:0.5", "switch:scale_up_l1/*/1", "FILE",
                 *TIER_FAILURES]
        if hostile:
            specs += ["switch:leaf/²", "link:x", "slow:switch:a:2", "bogus:1",
                      "node:acc/99999999999999999999", "link:acc/0->", "slow:link:a-b:nan"]
        spec = draw(st.sampled_from(specs))
        return spec if spec != "FILE" else draw(file_value(case, "failures", hostile))
    if what == "trace":  # fractional-GPU pod traces mostly; the long bundled Philly
        # replay (tens of seconds on the largest presets) is left to its own tests
        pick = draw(st.sampled_from(["synthetic", "synthetic", "alibaba-openb", "FILE",
                                     "FILE", "FILE"]))
        return pick if pick != "FILE" else draw(file_value(case, "trace", hostile))
    if what in ("placement", "traffic", "plan", "sweep", "validation", "topo", "xml",
                "monitor"):
        return draw(file_value(case, what, hostile))
    if what == "accelerator":
        names = ["h100-sxm-80gb", "gb300", "b200-sxm-180gb", "mi300x"]
        return draw(st.sampled_from(names + (["h100", "[/]", ""] if hostile else [])))
    if what == "sizes":
        sizes = list(param.words) or ["8"]
        if hostile:
            sizes += ["0", "2T", "x", "1e3", ",", "8," * 50, "²", "-8", "1e30", "1M"]
        return draw(st.sampled_from(sizes))
    if not hostile:
        pool = list(param.words) or PLAUSIBLE.get(param.name, PLAUSIBLE_BY_KIND.get(
            param.kind, []))
        return draw(st.sampled_from(pool)) if pool else ""
    pool = {"int": HOSTILE_INTS, "float": HOSTILE_FLOATS}.get(param.kind, HOSTILE_TEXT)
    return draw(st.sampled_from(pool + list(param.words)))


def _around_inputs(draw: st.DrawFn, case: Case, index: int) -> None:
    """Now and then point the output at argv ``index`` at an input: the same file, or a
    folder holding it (the input moved into it)."""
    how = draw(st.sampled_from(["none"] * 4 + AROUND_INPUTS))
    name = draw(st.sampled_from(sorted(case.inputs)))
    if how == "same":
        case.argv[index] = name
    elif how == "holder" and "/" not in name:
        moved = f"holder/{name}"
        case.files[moved] = case.files.pop(name)
        case.inputs = (case.inputs - {name}) | {moved}
        case.argv = [moved if a == name else a for a in case.argv]
        case.argv[index] = "holder"


@st.composite
def invocation(draw: st.DrawFn, command: Command) -> Case:
    """An argv for ``command``: its required parameters mostly, some optional ones, and
    now and then an unknown option, a missing value or an extra argument."""
    case = Case(list(command.path))
    usable = [p for p in command.params if p.name not in EXTERNAL_OPTIONS]
    hostile = set(draw(st.lists(st.sampled_from([p.name for p in usable] or ["-"]),
                                max_size=2))) if usable else set()
    outputs: list[int] = []  # argv indices of output values
    for param in usable:
        chance = 0.95 if param.required or param.name in hostile else 0.35
        if not draw(st.floats(0, 1)) < chance:
            continue
        if param.is_flag:
            case.argv.append(param.secondary if param.secondary and draw(st.booleans())
                             else param.name)
            continue
        repeats = draw(st.integers(1, 3)) if param.multiple else 1
        for _ in range(repeats):
            value = draw(value_for(case, param, param.name in hostile))
            if value == "" and param.name not in hostile:
                continue  # nothing plausible to give: leave the option out
            case.argv += [param.name, value] if param.is_option else [value]
            if role(param) == "output" and param.name in hostile:
                outputs.append(len(case.argv) - 1)
    if outputs and case.inputs:
        _around_inputs(draw, case, outputs[0])
    extra = draw(st.sampled_from(["none"] * 16 + ["unknown", "dangling", "extra",
                                                   "help", "flagvalue"]))
    if extra == "unknown":
        case.argv.append("--bogus-option")
    elif extra == "dangling":
        options = [p.name for p in command.params if p.is_option and not p.is_flag
                   and p.name not in EXTERNAL_OPTIONS]
        if options:
            case.argv.append(draw(st.sampled_from(options)))
    elif extra == "extra":
        case.argv.append("unexpected-argument")
    elif extra == "help":
        case.argv.append("--help")
    elif extra == "flagvalue":
        flags = [p.name for p in command.params if p.is_flag]
        if flags:
            case.argv.append(draw(st.sampled_from(flags)) + "=x")
    return case
