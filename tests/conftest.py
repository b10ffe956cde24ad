"""Test-wide settings: hypothesis runs are derandomised so CI is reproducible, and the suite
runs on every core (pytest-xdist) with the tests that share costly state kept together.

Set ``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples locally.

Parallel runs: ``addopts`` (pyproject.toml) asks for ``--numprocesses=auto
--dist=loadgroup``: one worker process per core; tests without a group go to whichever
worker is free, and the tests of one ``xdist_group`` run on one worker, in one process,
so the state they share is built once there:

* ``design``: the modules that review the bundled examples (:data:`DESIGN_MODULES`);
  they share the per-process memo of whole designs (:mod:`designs`) and the package's
  own stage memo (``supernode.design.cache``);
* ``ray``: the tests that start a local Ray cluster (two at once would fight for the
  cores and the object store);
* a module whose tests use a module-scoped fixture defined in it: the module (its
  fixture is built once, not once per worker), except :data:`SPLIT_MODULES`.

Serial runs: ``-n 0``, or ``-p no:xdist`` (the ``--numprocesses``/``--dist`` of ``addopts``
are then accepted and ignored).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Modules that run designs of the bundled examples: one worker, one memo.
DESIGN_MODULES = frozenset({
    "test_design_artefacts", "test_design_cli", "test_design_reliability",
    "test_design_report", "test_design_results_schema", "test_design_rules",
    "test_design_scheduling", "test_designs_shared", "test_report_sections",
    "test_design_reconcile", "test_design_bom", "test_design_compare",
    "test_design_straddle", "test_design_reproduce",
})
#: Modules whose module-scoped fixture is cheap next to the tests: spread over workers
#: (the fuzz suite's fixture starts one worker process per pytest worker; its commands
#: take a third of the suite's time and must not all queue on one worker).
SPLIT_MODULES = frozenset({"test_fuzz_cli"})
#: Tests that start Ray, by name.
RAY_TESTS = frozenset({"test_ray_and_local_pool_give_identical_tables",
                       "test_local_pool_and_ray_give_identical_runs"})


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """With ``-p no:xdist``, accept (and ignore) the ``--numprocesses``/``--dist`` of
    ``addopts``."""
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist", "xdist disabled: these options are ignored")
        group.addoption("--numprocesses", dest="numprocesses", default=None)
        group.addoption("--dist", dest="dist", default="no")


def _group(item: pytest.Item) -> str | None:
    module = item.module.__name__.rpartition(".")[2] if item.module else ""
    name = getattr(item, "originalname", item.name)
    if name in RAY_TESTS:
        return "ray"
    if module in DESIGN_MODULES:
        return "design"
    if module in SPLIT_MODULES:
        return None
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info else ()):
        if any(d.scope == "module" and _defined_in(d, item) for d in defs):
            return module
    return None


def _defined_in(fixturedef, item: pytest.Item) -> bool:
    func = getattr(fixturedef, "func", None)
    return getattr(func, "__module__", None) == item.module.__name__


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that share state with their ``xdist_group`` (before xdist reads the
    marks)."""
    if not config.pluginmanager.has_plugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))


class _GroupSuffix:
    """Puts the ``@group`` suffix that ``--dist=loadgroup`` schedules by into the node ids
    of an xdist worker's items, after xdist's own hook.

    pytest-xdist (3.8) appends it by assigning ``item._nodeid``; since pytest 9.2 a node's
    id is the structured ``item._id`` and that assignment is lost, so every test would be
    scheduled alone (pytest-xdist issue 1386). Where xdist's suffix took (older pytest, or
    a fixed xdist) this changes nothing.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if not getattr(config.option, "loadgroup", False):
            return
        from _pytest.nodeid import NodeId

        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            suffix = "@" + "_".join(names)
            if names and not item.nodeid.endswith(suffix):
                item._id = NodeId.parse(item.nodeid + suffix)


def pytest_configure(config: pytest.Config) -> None:
    """Register :class:`_GroupSuffix` in xdist workers of a pytest with structured ids."""
    if hasattr(config, "workerinput") and _structured_ids():
        config.pluginmanager.register(_GroupSuffix(), "supernode-group-suffix")


def _structured_ids() -> bool:
    try:
        import _pytest.nodeid  # noqa: F401  (pytest >= 9.2)
    except ImportError:
        return False
    return True
