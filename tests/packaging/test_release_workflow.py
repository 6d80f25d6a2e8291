"""The release workflow: a version tag builds the sdist and wheel once, checks them with
``twine check``, runs the installed wheel from an empty directory, and only then publishes those
same files with PyPI trusted publishing — the one job holding an OIDC token, and no stored secret.
actionlint and the workflow schema check it with the others (tests/action/test_lints.py)."""

from __future__ import annotations

import tomllib

from tests.action.test_workflows import load
from tests.conftest import REPO

PATH = REPO / ".github" / "workflows" / "release.yml"


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_triggered_by_version_tags_only():
    doc = load(PATH)
    assert doc["on"] == {"push": {"tags": ["v*"]}}
    assert doc["permissions"] == {"contents": "read"}


def test_build_checks_what_it_publishes():
    build = load(PATH)["jobs"]["build"]
    runs = _runs(build)
    assert "python -m build" in runs and "twine check --strict dist/*" in runs
    assert runs.index("python -m build") < runs.index("twine check")
    assert "-c constraints.txt dist/*.whl" in runs and 'cd "$(mktemp -d)"' in runs and " verify " in runs
    assert '"$TAG" != "v$version"' in runs
    assert "permissions" not in build  # the read-only default
    upload = build["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["with"]["path"] == "dist/"


def test_publish_uses_trusted_publishing_and_nothing_else():
    text, publish = PATH.read_text(encoding="utf-8"), load(PATH)["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    uses = [step["uses"] for step in publish["steps"]]
    assert uses[0].startswith("actions/download-artifact@") and uses[-1].startswith("pypa/gh-action-pypi-publish@")
    assert all("run" not in step for step in publish["steps"])
    assert "secrets." not in text and "password" not in text


def test_the_build_tools_are_pinned_and_the_version_is_a_release_version():
    runs = _runs(load(PATH)["jobs"]["build"])
    assert "build==" in runs and "twine==" in runs
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert all(part.isdigit() for part in version.split("."))
