"""npm's engine warning (``EBADENGINE``) turns a later failure into ``not-measured-here``; an install
script can print (or log) those words too. The warning is kept only when the package it names, as
installed, declares that requirement in its own ``package.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.probe import install as installing
from harness.probe import machine_fault, resolve

ENGINE = ("npm warn EBADENGINE Unsupported engine {{\nnpm warn EBADENGINE   package: '{package}@1.0.0',\n"
          "npm warn EBADENGINE   required: {{ node: '>=22' }},\nnpm warn EBADENGINE   current: {{ node: 'v20.20.2' }}\n"
          "npm warn EBADENGINE }}\n")


@pytest.fixture(autouse=True)
def node_20(monkeypatch):
    monkeypatch.setattr(machine_fault, "_NODE", [(20, 20, 2)])


def _install(tmp_path: Path, manifests: dict[str, dict]) -> tuple[Path, resolve.Resolved]:
    npm = tmp_path / "npm"
    modules = npm / "_npx" / "0123456789abcdef" / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    for name, manifest in manifests.items():
        (modules / name).mkdir(parents=True)
        (modules / name / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0", **manifest}))
    found = resolve.Resolved("npx", "forger", "1.0.0", ("sh", "-c", "forger"), "host", str(modules / ".bin"))
    return npm, found


def _findings(npm: Path, found: resolve.Resolved, text: str) -> tuple[str, ...]:
    ran = resolve.Ran(0, False, text.encode(), 1.0)
    return installing._findings(ran, npm, (0.0, frozenset()), found, "host")


@pytest.mark.parametrize("named", ["forger", "dep", "@scope/dep"])
def test_a_warning_the_named_package_declares_is_kept(tmp_path, named):
    npm, found = _install(tmp_path, {"forger": {}, named: {"engines": {"node": ">=22"}}})
    assert _findings(npm, found, ENGINE.format(package=named)) == (
        f"npm EBADENGINE: {named}@1.0.0 requires node >=22; this machine has v20.20.2",)


@pytest.mark.parametrize("manifest", [{}, {"engines": {"node": ">=18"}}, {"engines": ">=22"}, {"engines": {"node": 22}}])
@pytest.mark.parametrize("named", ["forger", "dep"])
def test_a_warning_the_named_package_does_not_declare_is_dropped(tmp_path, manifest, named):
    npm, found = _install(tmp_path, {"forger": manifest, "dep": manifest})
    assert _findings(npm, found, ENGINE.format(package=named)) == ()


@pytest.mark.parametrize("named", ["absent", "../../../outside", "/etc", "a/b/c"])
def test_a_warning_naming_a_package_not_installed_or_outside_the_install_is_dropped(tmp_path, named):
    npm, found = _install(tmp_path, {"forger": {"engines": {"node": ">=22"}}})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "package.json").write_text(json.dumps({"engines": {"node": ">=22"}}))
    assert _findings(npm, found, ENGINE.format(package=named)) == ()


def test_a_script_s_free_text_engine_claim_is_no_finding(tmp_path):
    npm, found = _install(tmp_path, {"forger": {"engines": {"node": ">=22"}}})
    assert _findings(npm, found, "This package requires Node.js >= 22\n") == ()
