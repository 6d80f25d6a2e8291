"""Rules the linters do not check: pins, tokens, secrets, concurrency, and that both action
variants declare the inputs and outputs the code reads and writes."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.action.inputs import NAMES
from tests.action.test_entrypoint import OUTPUT_NAMES
from tests.action.test_lints import ACTIONS, EXAMPLES, WORKFLOWS
from tests.conftest import REPO

SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
OWN_ACTION = "mcp-context-cost/mcp-context-cost"


def load(path) -> dict:
    doc = yaml.safe_load(path.read_text())
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


def steps(doc: dict) -> list[dict]:
    if "jobs" in doc:
        return [s for job in doc["jobs"].values() for s in job.get("steps", [])]
    return doc["runs"].get("steps", [])


ALL = WORKFLOWS + EXAMPLES + ACTIONS
IDS = [p.relative_to(REPO).as_posix() for p in ALL]


@pytest.mark.parametrize("path", ALL, ids=IDS)
def test_third_party_actions_are_pinned_to_commit_shas(path):
    text = path.read_text()
    for step in steps(load(path)):
        uses = step.get("uses")
        if not uses or uses.startswith("./") or uses.split("@")[0].startswith(OWN_ACTION):
            continue
        assert SHA_PIN.match(uses), f"{path.name}: {uses} is not pinned to a full commit SHA"
        assert re.search(re.escape(uses) + r" # v\d", text), f"{path.name}: {uses} has no '# vX' comment"


@pytest.mark.parametrize("path", ALL, ids=IDS)
def test_no_expression_is_interpolated_into_a_script(path):
    for step in steps(load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: step {step.get('name')!r} interpolates into run:"


@pytest.mark.parametrize("path", WORKFLOWS + EXAMPLES, ids=lambda p: p.name)
def test_default_token_is_read_only_and_only_publishing_jobs_write(path):
    doc = load(path)
    assert doc["permissions"] == {"contents": "read"}
    for name, job in doc["jobs"].items():
        pushes = any("git push" in s.get("run", "") for s in job.get("steps", []))
        writes = job.get("permissions", {}).get("contents") == "write"
        assert pushes == writes, f"{path.name}: job {name} pushes={pushes} but contents: write={writes}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_publisher_shares_one_concurrency_group(path):
    for name, job in load(path)["jobs"].items():
        if any("git push" in s.get("run", "") for s in job.get("steps", [])):
            assert job.get("concurrency") == {"group": "publish-main", "cancel-in-progress": False}, name
            assert "pull --rebase" in "".join(s.get("run", "") for s in job["steps"])


def test_catalog_pr_workflow_has_no_secrets_and_a_read_only_token():
    path = REPO / ".github" / "workflows" / "servers-pr.yml"
    text, doc = path.read_text(), load(path)
    assert "secrets." not in text and "secrets[" not in text
    assert doc["on"] == {"pull_request": {"paths": ["servers.yaml"]}}
    assert doc["permissions"] == {"contents": "read"}
    for job in doc["jobs"].values():
        assert "permissions" not in job
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
    run = "\n".join(s.get("run", "") for s in steps(doc))
    assert "check-jsonschema --schemafile schemas/servers.schema.json servers.yaml" in run
    assert 'git show "origin/${BASE_REF}:servers.yaml"' in run
    assert "env -i" in run and "mcp-context-cost measure --server" in run


def test_sweep_fans_out_and_merges_once():
    doc = load(REPO / ".github" / "workflows" / "sweep.yml")
    assert set(doc["on"]) == {"schedule", "workflow_dispatch"}
    assert "date" in doc["on"]["workflow_dispatch"]["inputs"]
    measure, publish = doc["jobs"]["measure"], doc["jobs"]["publish"]
    assert len(measure["strategy"]["matrix"]["shard"]) == int(doc["env"]["SHARDS"])
    measure_run = " ".join(s.get("run", "") for s in measure["steps"])
    assert '--shard "$SHARD/$SHARDS" --out "shard-$SHARD"' in measure_run
    assert "permissions" not in measure
    assert publish["needs"] == "measure"
    assert "sweep --merge shards/sweep-shard-* --commit" in " ".join(s.get("run", "") for s in publish["steps"])


def test_both_variants_declare_what_the_code_reads_and_writes():
    container, host = (load(p) for p in ACTIONS)
    assert container["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert list(container["inputs"]) == list(NAMES)
    assert list(host["inputs"]) == list(NAMES) + ["python-version"]
    assert set(container["outputs"]) == set(host["outputs"]) == OUTPUT_NAMES
    assert host["runs"]["using"] == "composite"
    measure = next(s for s in host["runs"]["steps"] if s.get("id") == "measure")
    for name in NAMES:
        key = "INPUT_" + name.upper().replace("-", "_")
        assert measure["env"][key] == "${{ inputs.%s }}" % name
    assert measure["run"] == '"$HARNESS" "$ACTION_ROOT/entrypoint.py"'
    for name in OUTPUT_NAMES:
        assert host["outputs"][name]["value"] == "${{ steps.measure.outputs.%s }}" % name


def test_dockerfile_pins_and_copies_what_exists():
    text = (REPO / "Dockerfile").read_text()
    bases = re.findall(r"^FROM (\S+)", text, re.M)
    assert bases and all(re.search(r":\d+\.\d+\.\d+-", b) for b in bases), bases
    assert 'ENTRYPOINT ["python", "/app/entrypoint.py"]' in text
    assert "RUN python -m harness.core.tokenizer" in text and "MCP_CONTEXT_COST_CACHE=" in text
    assert "-c /app/constraints.txt" in text
    for line in re.findall(r"^COPY (?!--from)(.+) /app/\S*$", text, re.M):
        for source in line.split():
            assert (REPO / source).exists(), f"the Dockerfile copies {source}, which does not exist"
    ignored = (REPO / ".dockerignore").read_text().split()
    for source in ("pyproject.toml", "README.md", "constraints.txt", "entrypoint.py", "schemas/", "harness/"):
        assert f"!{source}" in ignored
