"""Design rules: the seeds' specification as checks a design is reviewed against.

Each rule (:class:`~supernode.rules.registry.Rule`) has an id, the seed section it comes
from, a threshold, a severity (error, warning, info), a rationale, and an evaluation that
returns the measured value and a suggested fix with its predicted effect. Thresholds and
severities come from the default rule pack (``data/rules/default.yaml``) and may be
overridden by a user pack (:func:`~supernode.rules.pack.load_pack`). :func:`run_rules`
evaluates every enabled rule on a design's results (:class:`~supernode.rules.facts.Facts`).
"""

from supernode.rules.engine import VERDICTS, Finding, run_rules, summary
from supernode.rules.facts import Facts
from supernode.rules.pack import RulePack, default_pack, load_pack
from supernode.rules.registry import RULES, Outcome, Rule

__all__ = ["RULES", "VERDICTS", "Facts", "Finding", "Outcome", "Rule", "RulePack", "default_pack",
           "load_pack", "run_rules", "summary"]
