"""What one ``supernode estimate`` process imports (issue 30: a whole ``estimate`` as
close to a bare ``import numpy`` as it can be).

The contract, checked in a fresh interpreter: the command runs, prints its tables, and
has imported neither the heavy libraries other commands use (matplotlib, scipy,
networkx, Ray, jinja2) nor any other command's module; loading the command read no
other command module's source beyond a text search (:func:`may_register`). Nor does it
import what the step model never uses: numpy's masked arrays (``numpy.ma``, which a plain
``np.unique`` imports) and the topology's graph builders (a cluster check needs only the
fat-tree sizing).
"""

from __future__ import annotations

import json
import subprocess
import sys

from supernode.commands import COMMAND_MODULES
from supernode.commands._listing import may_register, read_module

HEAVY = ("matplotlib", "scipy", "networkx", "ray", "jinja2")
#: Modules of numpy and the toolkit an estimate has no use for.
UNUSED = ("numpy.ma", "supernode.topology.graph", "supernode.topology.fat_tree",
          "supernode.topology.scale_up", "supernode.topology.hybrid",
          "supernode.topology.cluster_graph", "supernode.topology.metrics")

_RUN = """
import json, sys
from supernode.cli import main
try:
    main(['estimate', '--cluster', 'dgx-h100-superpod-su', '--workload', 'llama3-70b',
          '--tp', '8', '--pp', '4'])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
from supernode.commands import _listing
print(json.dumps({"code": code, "modules": sorted(sys.modules),
                  "parsed": _listing.read_module.cache_info().currsize}), file=sys.stderr)
"""


def _estimate_process() -> tuple[str, dict[str, object]]:
    proc = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True,
                          check=False, timeout=120)
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


def test_estimate_imports_no_heavy_library_and_no_other_command() -> None:
    stdout, seen = _estimate_process()
    assert seen["code"] == 0 and "step time" in stdout and "memory per GPU" in stdout
    modules = seen["modules"]
    assert isinstance(modules, list)
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    assert not [m for m in modules if m in UNUSED or m.startswith("numpy.ma.")]
    assert "supernode.topology.sizing" in modules  # the check that stays
    commands = {m for m in modules if m.startswith("supernode.commands.")
                and not m.rsplit(".", 1)[1].startswith("_")}
    assert commands == {"supernode.commands.estimate"}
    parsed = seen["parsed"]
    assert isinstance(parsed, int) and parsed == sum(
        may_register(m, "estimate") for m in COMMAND_MODULES) < len(COMMAND_MODULES)


def test_the_text_search_never_misses_a_module_that_registers_a_name() -> None:
    for module in COMMAND_MODULES:
        found = read_module(module)
        assert found is not None, module
        for entry in (*found[0], *found[1]):
            assert may_register(module, entry.name), (module, entry.name)
    assert not may_register("supernode.commands.estimate", "simulate")
    assert may_register("supernode.no_such_module", "estimate")  # unreadable: look inside
