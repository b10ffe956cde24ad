"""What the fuzz suite throws at the CLI: commands found in the app, hostile values, and
documents mutated from the bundled presets and examples.

Everything is discovered at run time from the typer app (:func:`commands`), so a command
another issue adds is fuzzed with no change here: each option gets values by its type
(int, float, bool, path, text) and by what its name and help say it takes (a cluster, a
workload, a plan, a placement, a traffic or failure file, a sweep spec, an output folder,
...). A case is an ``argv`` and the files it needs, written into a fresh folder.

Seeds are the package's own presets and the repository's examples (``examples/``); a
mutation deletes, renames or replaces a field, scales a number by 1e9 (a unit slip),
duplicates a key, truncates the text or writes it as JSON. Sweep seeds are the example
sweeps rebased onto the 8-GPU ``hgx-h100`` and cut to two values per axis, so that one
case plans a few variants, not dozens (the suite's budget is a few minutes on 2 cores).
"""

from __future__ import annotations

import copy
import json
import os
import re
import typing
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "supernode" / "data"
EXAMPLES = ROOT / "examples"

#: Parameters that start or reach external services (a Ray cluster and its address);
#: their own tests cover them.
EXTERNAL_OPTIONS = frozenset({"--ray", "ADDRESS"})

HOSTILE_TEXT = ["", " ", "x", "[/]", "[red]x", "$x^$", "a$b", "a\nb", "\t", "\x1b[31m",
                "²", "٣", "0-10000000000", "1e30", "nan", "inf", "-1", "0", "a" * 300,
                "é" * 130, "../x", "/", "*", "a,b", "a:b", "\\", "'", '"', "%s", "{}",
                "\u2028", "\udcff"]  # the last: an undecodable byte of a file name
HOSTILE_INTS = ["0", "1", "-1", "2", "3", "7", "8", "16", "64", "1000", "1048577",
                str(2**31), str(2**63), str(10**30), "x", "", "1.5", "1e3", "²", " 8",
                "0x10", "+4"]
HOSTILE_FLOATS = ["0", "-1", "0.5", "1", "1e-300", "1e308", "1e999", "nan", "inf", "-inf",
                  "x", "", "1,5", "15e12", "²"]
HOSTILE_VALUES: list[Any] = [None, True, False, 0, -1, 1, 2, 7, 2**31, 2**62, 10**30, 2**63,
                             1e308, -1e-300, 0.5, "x", "", "[/]", "$x^$", "a\nb", "²",
                             "0-10000000000", "1e30", "a" * 300, [], {}, [1, 2], {"a": 1},
                             400_000_000_000]

#: Extremes a number of a document is pushed to (valid types, absurd sizes).
EXTREMES: list[Any] = [0, 1, 3, 10**9, 2**40, 2**62, 1e-300, 1e-9, 0.5, 1e9, 1e300]

CLUSTER_PRESETS = sorted(p.stem for p in (DATA / "clusters").glob("*.yaml"))
WORKLOAD_PRESETS = sorted(p.stem for p in (DATA / "workloads").glob("*.yaml"))
#: Small presets come up more often: most cases should run in well under a second.
SMALL_CLUSTERS = ["hgx-h100", "mi300x-8", "gb200-nvl72", "gb300-nvl72", "trn2-ultraserver"]
SMALL_WORKLOADS = ["llama3-8b", "mixtral-8x7b", "llama3-70b"]


@dataclass(frozen=True)
class Param:
    """One option or argument of a command, as the fuzzer sees it."""

    name: str            # the option string (--tp) or the argument's metavar
    is_option: bool
    is_flag: bool
    kind: str            # int, float, bool, path, text
    required: bool
    multiple: bool
    secondary: str | None
    help: str
    words: tuple[str, ...]   # candidate values: named in the help text, the default


@dataclass(frozen=True)
class Command:
    """A leaf command: its path (``("catalog", "show")``) and parameters."""

    path: tuple[str, ...]
    params: tuple[Param, ...]

    @property
    def id(self) -> str:
        """Test id: the command path joined by spaces."""
        return " ".join(self.path)


def _kind(param: Any) -> str:
    descriptor = getattr(param, "type_descriptor", None)
    annotation = descriptor.annotation if descriptor is not None else None
    if annotation is None:  # older typer on click: a click ParamType
        name = getattr(getattr(param, "type", None), "name", "text")
        return {"integer": "int", "float": "float", "boolean": "bool",
                "path": "path"}.get(name, "text")
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    args = [typing.get_args(a)[0] if typing.get_origin(a) is list else a for a in args]
    base = args[0]
    if base is bool:
        return "bool"
    if base is int:
        return "int"
    if base is float:
        return "float"
    return "path" if isinstance(base, type) and issubclass(base, os.PathLike) else "text"


def _words(text: str, default: Any = None) -> tuple[str, ...]:
    """Candidate values: those a help text names (``ecmp|spray|adaptive``, ``One of: a,
    b``, ``e.g. 8,36,72``) and the parameter's default."""
    found: list[str] = []
    if isinstance(default, str | int | float) and not isinstance(default, bool):
        found.append(str(default))
    example = re.search(r"e\.g\.\s*([^\s;)]+)", text)
    if example:
        found.append(example.group(1).rstrip(".,"))
    for group in re.findall(r"[\w.-]+(?:\|[\w.-]+)+", text):
        found += group.split("|")
    match = re.search(r"[Oo]ne of:?\s*([^.]+)", text)
    if match:
        found += [w.strip() for w in match.group(1).split(",") if w.strip()]
    return tuple(dict.fromkeys(w.strip(".") for w in found if w.strip(".")))


def _param(param: Any) -> Param:
    is_option = getattr(param, "param_type_name", "") == "option"
    opts = [o for o in param.opts if o.startswith("--")] or list(param.opts)
    name = opts[0] if is_option else str(param.metavar or param.name).strip("[]")
    secondary = next(iter(getattr(param, "secondary_opts", ()) or ()), None)
    help_text = " ".join(str(getattr(param, "help", "") or "").split())
    default = getattr(param, "default", None)
    return Param(name, is_option, bool(getattr(param, "is_flag", False)), _kind(param),
                 bool(param.required), bool(param.multiple), secondary, help_text,
                 _words(help_text, default if not callable(default) else None))


def commands() -> list[Command]:
    """Every leaf command of the app, with its parameters (discovered at run time)."""
    import typer.main

    from supernode.commands import app, register_all

    register_all()
    out: list[Command] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        subs = getattr(node, "commands", None)
        if subs:
            for name in sorted(subs):
                walk(subs[name], (*path, name))
            return
        params = tuple(_param(p) for p in node.params if p.name != "help")
        out.append(Command(path, params))

    walk(typer.main.get_command(app), ())
    return out


# --- documents -------------------------------------------------------------------------

def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _small_sweep(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["base"] = {**out["base"], "cluster": "hgx-h100", "workload": "llama3-8b",
                   "gpus": None, "global_batch": None}
    if "axes" in out:
        out["axes"] = {k: v[:2] for k, v in out["axes"].items()
                       if not k.startswith("scale_up") and k != "workload"} or \
            {"plan.global_batch": [64, 128]}
    if "variants" in out:
        out["variants"] = [{k: v for k, v in var.items() if not k.startswith("workload")}
                           for var in out["variants"][:2]]
        out["variants"] = [v for v in out["variants"] if v] or [{"plan.global_batch": 64}]
    return out


@lru_cache(maxsize=1)
def seeds() -> dict[str, list[Any]]:
    """Seed documents per kind (parsed data, or text for ``topo``)."""
    clusters = [_load(p) for p in sorted((DATA / "clusters").glob("*.yaml"))]
    clusters += [_load(p) for p in sorted(EXAMPLES.glob("*.yaml"))]
    validation = _load(DATA / "validation" / "public.json")
    cases = validation["cases"]
    return {
        "cluster": clusters,
        "workload": [_load(p) for p in sorted((DATA / "workloads").glob("*.yaml"))],
        "plan": [{"tp": 8, "pp": 1, "global_batch_sequences": 64},
                 {"tp": 4, "pp": 2, "dp": 1, "global_batch_sequences": 32,
                  "recompute": "selective", "zero_stage": 1},
                 {"tp": 2, "cp": 2, "global_batch_sequences": 16, "micro_batch": 2}],
        "placement": [_load(EXAMPLES / "netsim" / "two-jobs.yaml"),
                      {"jobs": [{"name": "a", "accelerators": "0-3",
                                 "plan": {"tp": 4, "global_batch_sequences": 8}},
                                {"name": "b", "accelerators": [4, 5, 6, 7],
                                 "workload": "llama3-8b",
                                 "plan": {"tp": 2, "global_batch_sequences": 8}}]}],
        "traffic": [_load(EXAMPLES / "netsim" / "rings-burst.yaml")] + 2 * [
                    {"collectives": [
                        {"name": "ar", "op": "all_reduce", "message_bytes": 2**24,
                         "accelerators": "0-7"},
                        {"name": "a2a", "op": "all_to_all", "message_bytes": 2**20,
                         "accelerators": [0, 1, 2, 3], "after": ["ar"], "repeat": 2}]}],
        "failures": [_load(EXAMPLES / "netsim" / "failures.yaml"),
                     {"failures": ["switch:scale_up_l1/0/1",
                                   "slow:link:acc/0-scale_up_l1/0/0:0.5"]}],
        "sweep": [_small_sweep(_load(p)) for p in sorted((EXAMPLES / "sweeps").glob("*.yaml"))],
        "validation": [{**validation, "cases": cases[i:i + 2]} for i in (0, 10, 30, 50)],
        "topo": [(DATA / "samples" / "nvidia-smi-topo-m_8xB300.txt").read_text()],
    }


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) into a parsed document, the root first."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:20]):
            out += _paths(value, (*prefix, i))
    return out


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn, kind: str, hostile: bool) -> Any:
    """A seed document of ``kind``; with 1-3 mutations when ``hostile``."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds()[kind])))
    if isinstance(doc, str):
        return _mutated_text(draw, doc) if hostile else doc
    for _ in range(draw(st.integers(1, 3)) if hostile else 0):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        numbers = [p for p in paths if p and isinstance(_get(doc, p), int | float)
                   and not isinstance(_get(doc, p), bool)]
        if numbers and draw(st.booleans()):  # a number pushed to an extreme (a count of
            path = draw(st.sampled_from(numbers))  # 1e9 switch chips, a 1e-300 Gb/s NIC)
            _get(doc, path[:-1])[path[-1]] = draw(st.sampled_from(EXTREMES))
            continue
        how = draw(st.sampled_from(["delete", "replace", "replace", "scale", "rename",
                                    "extra", "duplicate"]))
        if how == "delete":
            del parent[key]
        elif how == "replace":
            parent[key] = draw(st.sampled_from(HOSTILE_VALUES))
        elif how == "scale" and isinstance(parent[key], int | float) \
                and not isinstance(parent[key], bool):
            parent[key] = parent[key] * draw(st.sampled_from([1e9, 1e-9, -1, 0]))
        elif how == "rename" and isinstance(parent, dict):
            parent[f"{key}x"] = parent.pop(key)
        elif how == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "[/]", "$x$", "a" * 300]))] = 1
        elif how == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
    return doc


def _mutated_text(draw: st.DrawFn, text: str) -> str:
    """A text seed (nvidia-smi output) with one line dropped, doubled or garbled."""
    lines = text.splitlines()
    i = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["drop", "double", "garble", "tabs"]))
    if how == "drop":
        del lines[i]
    elif how == "double":
        lines.insert(i, lines[i])
    elif how == "garble":
        lines[i] = lines[i].replace("NV", draw(st.sampled_from(["NV99999999999", "X", "NV²",
                                                                "[/]", "$x$"])))
    else:
        lines[i] = lines[i].replace("\t", " ")
    return "\n".join(lines) + "\n"


@st.composite
def document_text(draw: st.DrawFn, kind: str, hostile: bool) -> tuple[str, bytes]:
    """(file suffix, bytes) of a document, as YAML or JSON; mutated and sometimes damaged
    when ``hostile``."""
    doc = draw(mutated(kind, hostile))
    if isinstance(doc, str):
        suffix, text = ".txt", doc
    elif draw(st.booleans()):
        suffix, text = ".json", json.dumps(doc, indent=1)
    else:
        suffix, text = ".yaml", yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    damage = draw(st.sampled_from(["none"] * 4 + ["truncate", "garbage", "dupkey",
                                                   "bom", "binary", "empty"])) \
        if hostile else "none"
    if damage == "truncate":
        text = text[: draw(st.integers(0, max(len(text) - 1, 0)))]
    elif damage == "garbage":
        text += draw(st.sampled_from(["\x00", "\x07", "{[", ": :", "&a [*a]", "\t- x"]))
    elif damage == "dupkey" and suffix == ".json" and text.startswith("{"):
        text = '{"name": "a", ' + text[1:] if '"name"' in text else text
    elif damage == "dupkey" and suffix == ".yaml":
        first = text.split("\n", 1)[0]
        text = f"{first}\n{text}"
    elif damage == "bom":
        text = "\ufeff" + text
    elif damage == "empty":
        text = ""
    data = text.encode("utf-8", "surrogatepass")
    if damage == "binary":
        data = bytes(range(256)) + data[:100]
    return suffix, data


# --- argv ------------------------------------------------------------------------------

#: What an option takes, by words in its name, metavar or help (first match wins).
ROLES = [
    ("topo", re.compile(r"output of .nvidia-smi", re.I)),
    ("output", re.compile(r"^(--out|--output|--plot)$|\b(write|output folder|folder|"
                          r"directory)\b", re.I)),
    ("placement", re.compile(r"placement", re.I)),
    ("traffic", re.compile(r"traffic", re.I)),
    ("failures", re.compile(r"^--fail", re.I)),
    ("plan", re.compile(r"^(--plan|--compare)$", re.I)),
    ("cluster", re.compile(r"cluster", re.I)),
    ("workload", re.compile(r"workload", re.I)),
    ("sweep", re.compile(r"^SPEC$|sweep spec", re.I)),
    ("validation", re.compile(r"validation", re.I)),
    ("accelerator", re.compile(r"accelerator", re.I)),
    ("sizes", re.compile(r"^--sizes$", re.I)),
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


FILE_NAMES = ["in", "[x]", "$a$", "a b", "é", "a" * 240]
OUTPUT_PATHS = ["out", "out/", "new/sub/dir", "x/../y/../../d", "existing-file",
                "existing-dir", "a" * 300, "link-to-file", "fifo", "/dev/null",
                "[/]out", "$x$"]


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
    suffix, data = draw(document_text(kind, hostile and draw(st.booleans())))
    names = FILE_NAMES if hostile else FILE_NAMES[:1]
    name = f"{draw(st.sampled_from(names))}-{len(case.files)}{suffix}"
    case.files[name] = data
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
                 "slow:link:acc/0-scale_up_l1/0/0:0.5", "switch:scale_up_l1/*/1", "FILE"]
        if hostile:
            specs += ["switch:leaf/²", "link:x", "slow:switch:a:2", "bogus:1",
                      "node:acc/99999999999999999999", "link:acc/0->", "slow:link:a-b:nan"]
        spec = draw(st.sampled_from(specs))
        return spec if spec != "FILE" else draw(file_value(case, "failures", hostile))
    if what in ("placement", "traffic", "plan", "sweep", "validation", "topo"):
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


@st.composite
def invocation(draw: st.DrawFn, command: Command) -> Case:
    """An argv for ``command``: its required parameters mostly, some optional ones, and
    now and then an unknown option, a missing value or an extra argument."""
    case = Case(list(command.path))
    usable = [p for p in command.params if p.name not in EXTERNAL_OPTIONS]
    hostile = set(draw(st.lists(st.sampled_from([p.name for p in usable] or ["-"]),
                                max_size=2))) if usable else set()
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
