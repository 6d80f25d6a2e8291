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


def pushes_in(step: dict) -> bool:
    """This repository's workflows push through the script alone; an example may push inline."""
    return step.get("run", "") == PUSH or "push origin" in step.get("run", "")


PUSH = "bash .github/scripts/push.sh"
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


@pytest.mark.parametrize("path", WORKFLOWS + EXAMPLES, ids=lambda p: p.name)
def test_an_artifact_of_a_hidden_folder_includes_hidden_files(path):
    """upload-artifact skips every file under a folder whose name starts with a dot unless told
    otherwise, and with if-no-files-found: ignore it says nothing: the artifact would be empty."""
    for step in steps(load(path)):
        if not str(step.get("uses", "")).startswith("actions/upload-artifact@"):
            continue
        paths = str(step["with"]["path"]).split()
        hidden = [p for p in paths if any(part.startswith(".") and part not in (".", "..") for part in p.split("/"))]
        assert not hidden or step["with"].get("include-hidden-files") is True, f"{path.name}: {hidden}"


@pytest.mark.parametrize("path", ALL, ids=IDS)
def test_no_expression_is_interpolated_into_a_script(path):
    for step in steps(load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: step {step.get('name')!r} interpolates into run:"


@pytest.mark.parametrize("path", WORKFLOWS + EXAMPLES, ids=lambda p: p.name)
def test_default_token_is_read_only_and_only_publishing_jobs_write(path):
    doc = load(path)
    assert doc["permissions"] == {"contents": "read"}
    for name, job in doc["jobs"].items():
        pushes = any(pushes_in(s) for s in job.get("steps", []))
        writes = job.get("permissions", {}).get("contents") == "write"
        assert pushes == writes, f"{path.name}: job {name} pushes={pushes} but contents: write={writes}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_publisher_shares_one_concurrency_group(path):
    for name, job in load(path)["jobs"].items():
        if any(pushes_in(s) for s in job.get("steps", [])):
            assert job.get("concurrency") == {"group": "publish-main", "cancel-in-progress": False}, name


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
    assert "env -i" in run and 'mcp-context-cost measure --server "$name" --isolation sandbox' in run


def test_sweep_fans_out_and_merges_once():
    doc = load(REPO / ".github" / "workflows" / "sweep.yml")
    assert set(doc["on"]) == {"schedule", "workflow_dispatch"}
    assert "date" in doc["on"]["workflow_dispatch"]["inputs"]
    plan, measure, publish = doc["jobs"]["plan"], doc["jobs"]["measure"], doc["jobs"]["publish"]
    # the matrix is the plan's, sized from the slice: no shard count written in the workflow
    assert measure["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert "SHARDS" not in doc.get("env", {})
    measure_step = next(s for s in measure["steps"] if s.get("name") == "Measure this shard of the slice")
    assert measure_step["env"]["SHARDS"] == "${{ needs.plan.outputs.shards }}"
    assert '--shard "$SHARD/$SHARDS" --out "shard-$SHARD" --isolation sandbox' in measure_step["run"]
    assert "mcp-context-cost slice --date" in " ".join(s.get("run", "") for s in plan["steps"])
    assert "permissions" not in measure and "permissions" not in plan
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


# --- jobs that can write: no catalog code, or a required sandbox and no stored credentials -------

# A run line that launches servers named by the catalog or proposed for it (or a third-party CLI that does).
CATALOG_CODE = re.compile(r'bin/mcp-context-cost (sweep(?! --merge)|measure|cross-check --asset |capability-probe|import )')
TOKEN = re.compile(r"github\.token|secrets\.")


def _jobs():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            yield path.name, name, job


def _runs(job: dict) -> str:
    return "\n".join(s.get("run", "") for s in job.get("steps", []))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_checkout_keeps_credentials(path):
    for step in steps(load(path)):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, f"{path.name}: {step}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_credentials_appear_only_in_the_step_that_uses_them(path):
    doc = load(path)
    assert not TOKEN.search(yaml.safe_dump(doc.get("env", {}))), f"{path.name}: a token in the workflow's env"
    for name, job in doc["jobs"].items():
        assert not TOKEN.search(yaml.safe_dump(job.get("env", {}))), f"{path.name}: a token in job {name}'s env"
        for step in job.get("steps", []):
            held = [k for k, v in step.get("env", {}).items() if TOKEN.search(str(v))]
            assert not TOKEN.search(step.get("run", "")) and not TOKEN.search(yaml.safe_dump(step.get("with", {})))
            if "TOKEN" in held:  # the write token: the push step alone
                assert pushes_in(step) and held == ["TOKEN"], f"{path.name}/{name}: {step.get('name')}"
            elif held:  # a secret: only a step that needs it (the Anthropic key for counting)
                assert held == ["ANTHROPIC_API_KEY"], f"{path.name}/{name}: {step.get('name')} holds {held}"


def test_every_catalog_launch_requires_the_sandbox():
    launches = 0
    for workflow, name, job in _jobs():
        for line in _runs(job).replace("\\\n", " ").splitlines():
            if CATALOG_CODE.search(line):
                launches += 1
                assert "--isolation sandbox" in line, f"{workflow}/{name}: {line.strip()}"
    assert launches >= 5  # sweep shards, self-badge, catalog PRs, cross-check, catalog import


def test_a_job_that_can_write_runs_catalog_code_only_sandboxed_and_holds_no_credentials():
    writers = 0
    for workflow, name, job in _jobs():
        if job.get("permissions", {}).get("contents") != "write":
            continue
        writers += 1
        if CATALOG_CODE.search(_runs(job)):
            assert (workflow, name) == ("sweep.yml", "cross-check"), f"{workflow}/{name} runs catalog code"
        push = [s for s in job["steps"] if pushes_in(s)]
        assert len(push) == 1 and push[0] is job["steps"][-1], f"{workflow}/{name}: the push is the last step"
    assert writers == 6  # sweep's publish, divergence and cross-check; self-badge; import's and pins' pull requests


def test_publishers_merge_measurements_from_read_only_jobs_with_re_derivation():
    for workflow in ("sweep.yml", "self-badge.yml"):
        doc = load(REPO / ".github" / "workflows" / workflow)
        publish, measure = doc["jobs"]["publish"], doc["jobs"]["measure"]
        assert "permissions" not in measure and publish["needs"] == "measure"
        assert "mcp-context-cost sweep --merge shards/" in _runs(publish)
        assert not CATALOG_CODE.search(_runs(publish))


def test_the_push_script_keeps_the_token_out_of_files_and_command_lines(tmp_path):
    """A real push through the script: the commit arrives, and the token is in no file of the
    clone (.git/config included) and was handed to git through its environment only."""
    import subprocess

    script = REPO / ".github" / "scripts" / "push.sh"
    text = script.read_text()
    assert "GIT_CONFIG_VALUE_0" in text and "git config --global" not in text and "remote set-url" not in text
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    git = lambda *a, cwd=tmp_path: subprocess.run(["git", *a], cwd=cwd, env=env, check=True,  # noqa: E731
                                                   capture_output=True, text=True).stdout
    git("init", "-q", "--bare", "-b", "main", "origin.git")
    git("clone", "-q", "origin.git", "clone")
    clone = tmp_path / "clone"
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=clone)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "second", cwd=clone)
    token = "ghs_" + "T0KEN" * 8
    done = subprocess.run(["bash", str(script)], cwd=clone, env=env | {"TOKEN": token, "BRANCH": "main"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git("log", "--format=%s", "main", cwd=tmp_path / "origin.git").split() == ["second", "first"]
    assert token not in done.stdout + done.stderr
    for path in clone.joinpath(".git").rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_every_catalog_launch_in_the_workflows_fails_the_job_without_bubblewrap(tmp_path):
    """Each launch line of the workflows, run where bubblewrap is missing (PATH holds git alone):
    exit 2 before anything is written — the job fails, it never falls back to the host."""
    import os
    import shlex
    import shutil
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    values = {"SHARD": "1", "SHARDS": "4", "DATE": "2026-11-30", "ref": "memory", "name": "memory",
              "RUNNER_TEMP": str(tmp_path), "REGISTRY_URL": "https://registry.invalid/v0/servers", "LIMIT": "5"}
    lines = [line for _, _, job in _jobs() for line in _runs(job).replace("\\\n", " ").splitlines()
             if CATALOG_CODE.search(line)]
    for line in lines:
        command = line.split("bin/mcp-context-cost", 1)[1].split("<")[0]
        argv = [_substitute(a, values) for a in shlex.split(command)]
        out = tmp_path / "work"
        out.mkdir(exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "harness.cli", *argv], cwd=REPO, capture_output=True, text=True,
                              env={"PATH": str(bin_dir), "HOME": str(tmp_path), "PYTHONPATH": os.environ.get(
                                  "PYTHONPATH", str(REPO))}, timeout=120)
        assert done.returncode == 2, (line, done.stdout, done.stderr)
        assert "--isolation sandbox: bubblewrap cannot create a sandbox here" in done.stderr + done.stdout, line
    assert not (REPO / "shard-1").exists() and not (REPO / "reference").exists()
    assert not (REPO / "import-report.json").exists()


def _substitute(arg: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: values[m.group(1)], arg)
