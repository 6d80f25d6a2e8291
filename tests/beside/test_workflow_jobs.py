"""The sweep workflow's beside-the-headline jobs: the weekly divergence run tolerates an
absent ANTHROPIC_API_KEY secret, never interpolates it into a script, and the cross-check feeds the
command the downloaded release asset (which the command verifies against the pinned SHA-256)."""

from __future__ import annotations

from tests.action.test_workflows import load
from tests.conftest import REPO

SWEEP = REPO / ".github" / "workflows" / "sweep.yml"


def test_divergence_runs_after_publish_only_with_the_secret():
    """The key is in the env of two steps alone: the one that says whether it is set, and the one
    that counts; every other step runs only when it is set."""
    job = load(SWEEP)["jobs"]["divergence"]
    assert job["needs"] == "publish" and "env" not in job
    key, *rest = job["steps"]
    secret = "${{ secrets.ANTHROPIC_API_KEY }}"
    assert key["env"] == {"ANTHROPIC_API_KEY": secret} and "GITHUB_STEP_SUMMARY" in key["run"]
    assert all(step["if"] == f"steps.{key['id']}.outputs.present == 'true'" for step in rest)
    holders = [step for step in rest if "ANTHROPIC_API_KEY" in step.get("env", {})]
    assert len(holders) == 1 and holders[0]["env"]["ANTHROPIC_API_KEY"] == secret
    assert holders[0]["run"] == ".venv/bin/mcp-context-cost divergence"
    runs = " ".join(step.get("run", "") for step in rest)
    assert "ANTHROPIC_API_KEY" not in runs


def test_cross_check_uses_the_pinned_asset_and_cannot_fail_the_sweep():
    job = load(SWEEP)["jobs"]["cross-check"]
    assert job["needs"] == "publish" and job["continue-on-error"] is True
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "cross-check --asset-url" in runs and "curl --proto '=https'" in runs
    assert 'cross-check --asset "$RUNNER_TEMP/mcp-tokens.tar.xz"' in runs
    assert "secrets." not in SWEEP.read_text().split("  cross-check:")[1]
