"""The design review: validate -> topology -> plan -> simulate -> reliability -> facility ->
monitoring -> scheduling -> artefacts -> rules -> report.

:func:`run_design` runs the stages and returns a :class:`DesignResult` whose
:meth:`~DesignResult.to_dict` is ``results.json`` (its model:
:class:`~supernode.design.results.DesignResults`) and whose ``files`` are the exported files'
texts; :func:`supernode.report.write_report` renders it (HTML, Markdown, decisions)
and writes them. Bundled examples: :func:`example`.
"""

from supernode.design.examples import FLAGSHIP, Example, example, examples
from supernode.design.pipeline import STAGES, DesignInput, DesignResult, run_design

__all__ = ["FLAGSHIP", "STAGES", "DesignInput", "DesignResult", "Example", "example",
           "examples", "run_design"]
