"""``results.json`` has a schema: every example design's validates against the JSON Schema
``supernode schema results`` prints and against :class:`DesignResults`; a mutated one
(an unknown key, a wrong type, a missing key, NaN) is refused; ``run_design(...).to_dict()``
refuses a stage's drift itself; ``rules.Facts`` is built by keyword only.

Cost: every example once without the simulation and one full run (``h100-servers``, the
cheapest whose every section is filled) through the CLI, per module.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import jsonschema
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design import DesignInput, DesignResult, examples, run_design
from supernode.design.results import SCHEMA, DesignResults, check_results
from supernode.report.write import results_json
from supernode.rules import Facts

FULL = "h100-servers"
#: Sections a run may leave null (each with a note), ``artefacts`` (left out of a report
#: rendered without its files) and ``memory`` (null for a design that says nothing about
#: its memory space: the full run's air-cooled H100 servers; the NVL72 examples fill it).
NULLABLE = {"reviewed_plan", "simulation", "reliability", "scheduling", "fit", "artefacts",
            "summary", "memory", "reproduce"}
#: Sections a run writes only when an option asks for them.
ASKED_FOR = {"serving"}


def run(*args: str):
    """``supernode ARGS`` in this process (CliRunner)."""
    register_all()
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def schema() -> dict:
    """The JSON Schema as ``supernode schema results`` prints it."""
    result = run("schema", "results")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def validator(schema) -> jsonschema.Draft202012Validator:
    """A validator of that schema (itself checked against the draft 2020-12 meta-schema)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def reviews() -> dict[str, DesignResult]:
    """Every example but the full one, reviewed without the simulation."""
    return {name: run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False,
                                         example=name))
            for name, e in examples().items() if name != FULL}


@pytest.fixture(scope="module")
def documents(reviews, tmp_path_factory) -> dict[str, dict]:
    """``results.json`` of every example: the full run's as ``supernode design`` writes and
    prints it, the others' as :func:`~supernode.report.write.results_json` writes them."""
    folder = tmp_path_factory.mktemp("design") / FULL
    result = run("design", "--example", FULL, "--json", "--quiet", "--out", str(folder))
    assert result.exit_code == 0, result.output
    full = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert json.loads(result.stdout) == full
    return {FULL: full} | {name: json.loads(results_json(r.to_dict()))
                           for name, r in reviews.items()}


def test_every_example_validates(documents, validator):
    assert set(documents) == set(examples())
    for name, doc in documents.items():
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(doc)]
        assert not errors, (name, errors[:10])
        assert check_results(doc).schema_ == SCHEMA


def test_the_full_run_fills_every_section(documents, schema):
    doc = documents[FULL]
    assert doc["inputs"]["simulate"] and doc["notes"] == []
    # every section but the ones a run adds only when asked (serving: --serve)
    assert list(doc) == [k for k in schema["properties"] if k not in ASKED_FOR]
    assert [k for k, v in doc.items() if v is None] == ["memory"]
    for name in ("flagship", "deepseek-v3-nvl72"):  # Grace hosts: the bundled data names them
        assert documents[name]["memory"]["source"] == "data for Grace", name
    flawed = documents["flawed"]  # a given plan: the estimate's knobs and its rank
    assert flawed["reviewed_plan"]["source"] == "given" and flawed["plans"]["reference"]
    assert flawed["reviewed_plan"]["chosen"] and flawed["simulation"] is None


def test_only_the_optional_sections_may_be_null(documents, validator):
    for key in documents[FULL]:
        doc = copy.deepcopy(documents[FULL])
        doc[key] = None
        if key in NULLABLE:
            assert not list(validator.iter_errors(doc)), key
            DesignResults.model_validate(doc)
        else:
            _refused(doc, validator)
    doc = copy.deepcopy(documents[FULL])
    del doc["artefacts"]  # a report rendered without its files
    assert not list(validator.iter_errors(doc))
    DesignResults.model_validate(doc)


def _refused(doc: dict, validator) -> None:
    """Both the JSON Schema and the model refuse ``doc``."""
    assert list(validator.iter_errors(doc)), "the JSON Schema accepts it"
    with pytest.raises(ValidationError):
        DesignResults.model_validate(doc)


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(extra_section={}),
    lambda d: next(iter(d["simulation"]["heatmap"].values())).update(share=0.5),
    lambda d: d["decisions"][0]["options"][0].update(score=1),
    lambda d: d["reliability"]["checkpoint"].update(interval_min=3.0),
    lambda d: d["facility"]["power"].update(cluster_at_tdp_w="1.9 MW"),
    lambda d: d["scheduling"]["schedule"]["policies"][0].update(tp_jobs=[1]),
    lambda d: d["verdict"].update(verdict="maybe"),
    lambda d: d["artefacts"]["files"][0].update(bytes=1.5),
    lambda d: d["plans"]["plans"][0].pop("step_time_s"),
    lambda d: d.pop("timings_s"),
    lambda d: d.update(schema="supernode-design/0"),
], ids=["top-level key", "heatmap key", "option key", "checkpoint key", "string for W",
        "list for int", "verdict value", "float for bytes", "missing plan key",
        "missing section", "other schema"])
def test_a_mutated_document_is_refused(documents, validator, mutate):
    doc = copy.deepcopy(documents[FULL])
    mutate(doc)
    _refused(doc, validator)


def test_non_finite_numbers_are_refused(documents):
    doc = copy.deepcopy(documents[FULL])
    doc["timings_s"]["plan"] = float("nan")
    with pytest.raises(ValidationError):
        DesignResults.model_validate(doc)
    doc["timings_s"]["plan"] = float("inf")
    with pytest.raises(ValidationError):
        DesignResults.model_validate(doc)


def test_to_dict_refuses_a_drifting_stage(reviews):
    result = reviews["flawed"]
    for section, key, value in (("facility", "pump_w", 1.0), ("cluster", "accelerators",
                                                              "many")):
        drifted = copy.deepcopy(result.data)
        drifted[section][key] = value
        with pytest.raises(ValidationError, match=key):
            dataclasses.replace(result, data=drifted).to_dict()


def test_facts_are_built_by_keyword():
    fields = [f.name for f in dataclasses.fields(Facts)]
    assert fields[:4] == ["cluster", "workload", "topology", "facility"]
    assert "reviewed_plan" in fields
    with pytest.raises(TypeError):
        Facts(None, {}, {}, {})  # type: ignore[misc]
    facts = Facts(cluster=None, workload={}, topology={}, facility={})  # type: ignore[arg-type]
    assert facts.plans is None and facts.reviewed_plan is None and facts.scheduling is None


# -- one model per fact (issue 24): each fact has one value wherever results.json shows it

def _cdu_facts(doc: dict) -> None:
    cdu, rel = doc["facility"]["cooling"]["cdu"], doc["reliability"]
    assert cdu["installed"] == (cdu["needed"] + cdu["redundancy"] if cdu["needed"] else 0)
    assert doc["monitoring"]["racks_per_cdu"] == cdu["racks_per_cdu"]
    assert doc["monitoring"]["cdu_labels"] == len(cdu["serves_racks"])
    if rel is None:
        return
    share = rel["job"]["gpus"] / doc["cluster"]["accelerators"]
    units = sum(u["count"] for u in rel["inventory"] if u["component"] == "cdu")
    assert units == pytest.approx(cdu["installed"] * share)
    rows = [b for b in rel["blast_radius"] if b["component"] == "cdu"]
    assert len(rows) == (1 if cdu["installed"] else 0)
    for row in rows:
        hosts = cdu["failure_stops_racks"] * doc["facility"]["racks"]["hosts_per_rack"]
        assert row["hosts_out"] == hosts
        assert row["effect"] == ("absorbed" if cdu["redundancy"] else "interrupt")


def _recovery_facts(doc: dict) -> None:
    from supernode.design.decisions import POLICY_NAMES

    rel = doc["reliability"]
    policy = rel["recovery"]["policy"]
    assert rel["recovery_decision"]["policy"] == rel["design"]["recovery"] == policy
    assert doc["summary"]["recovery_policy"] == policy
    assert rel["recovery_decision"]["alternative"]["policy"] != policy
    d6 = next(d for d in doc["decisions"] if d["id"] == "D6")
    chosen = [o["name"] for o in d6["options"] if o["chosen"] and o["name"] in
              POLICY_NAMES.values()]
    assert chosen == [POLICY_NAMES[policy]] and POLICY_NAMES[policy] in d6["decision"]
    mc = rel["goodput"]["monte_carlo"]["goodput"]["mean"]
    option = next(o for o in d6["options"] if o["name"] == POLICY_NAMES[policy])
    assert {f["label"]: f["value"] for f in option["figures"]}["Monte Carlo goodput"] == mc
    assert doc["summary"]["goodput"] == mc


def _goodput_names(doc: dict) -> None:
    """'goodput' means the reliability share of wall time, and nothing else."""
    for d in doc["decisions"]:
        for o in d["options"]:
            for f in o["figures"]:
                if "goodput" in f["label"]:
                    assert d["id"] == "D6", (d["id"], f["label"])
    for f in doc["findings"]:
        if f["category"] != "reliability":
            assert "goodput" not in (f["detail"] + (f["predicted_effect"] or "")), f["id"]


def _price_and_step_facts(doc: dict) -> None:
    summ, econ, view = doc["summary"], doc["economics"], doc["reviewed_plan"]
    for figure in econ.values():
        assert figure["source"]
    sim = doc["simulation"]
    assert summ["step_time_s"] == (sim["step_time_s"] if sim else view["step_time_s"])
    assert summ["estimate_step_time_s"] == view["step_time_s"]
    tokens = view["tokens_per_s"] * view["step_time_s"]
    assert summ["tokens_per_s"] == pytest.approx(tokens / summ["step_time_s"])
    gpus = view["tp"] * view["pp"] * view["dp"] * view["cp"]
    assert summ["cost_per_million_tokens_usd"] == pytest.approx(
        econ["gpu_hour"]["value"] * gpus * summ["step_time_s"] / 3600 / tokens * 1e6)
    energy = doc["facility"]["energy"]
    assert energy["per_step_it_j"] / doc["facility"]["power"]["cluster_at_workload_w"] == \
        pytest.approx(summ["step_time_s"])
    assert energy["price_usd_per_kwh"] == econ["energy"]["value"]
    size = doc["cluster"]["scale_up"]["size"]
    if doc["fit"] is not None:
        prices = {r["scale_up_size"]: r["price_per_gpu_hour_usd"] for r in doc["fit"]["sizes"]}
        assert prices[size] == pytest.approx(econ["gpu_hour"]["value"])
        if size > 8:
            assert prices[8] == pytest.approx(econ["gpu_hour"]["value"] /
                                              (1 + econ["supernode_premium"]["value"]))


def test_every_fact_has_one_value_wherever_it_appears(documents):
    """Recovery policy, CDUs, goodput, prices and the stated step time: one value each in
    every example's results.json (issue 24)."""
    assert len(documents) == len(examples())
    for doc in documents.values():
        _cdu_facts(doc)
        _goodput_names(doc)
        if doc["reviewed_plan"] is None:
            continue
        _recovery_facts(doc)
        _price_and_step_facts(doc)
    liquid = [d for d in documents.values() if d["facility"]["cooling"]["cdu"]["installed"]]
    assert liquid, "no example has CDUs: the CDU facts were not checked"


def test_every_cluster_file_fix_is_re_reviewed_and_passes_or_is_not_suggested(documents):
    """A fix stated as a cluster-file change was applied to a copy of the design and its rule
    run again: it passes there, or the review suggests no fix (issue 24)."""
    reviewed = 0
    for doc in documents.values():
        for f in doc["findings"]:
            review = f.get("fix_review")
            if not f["failed"]:
                assert review is None and f["fix"] is None
                continue
            if review is None:
                continue
            reviewed += 1
            after = review["failed_by_severity_after"]
            if review["status"] == "pass":
                assert f["fix"] is not None
                assert after[f["severity"]] == doc["verdict"]["failed_by_severity"][
                    f["severity"]] - 1
            else:
                assert f["fix"] is None and "none is suggested" in f["detail"]
    assert reviewed >= 2
