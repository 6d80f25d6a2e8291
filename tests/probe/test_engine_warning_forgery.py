"""The install's engine finding (a package that needs a newer Node) is read from what is installed — the
install's lockfile, else the server's own ``package.json`` — never from what npm or an install script
printed: a script can print npm's words, and a cold install and a warm one must say the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.probe import install as installing
from harness.probe import machine_fault, node_engine, resolve

SAID = "{name}@{version} declares engines.node '>=22'; this machine has v20.20.2"


@pytest.fixture(autouse=True)
def node_20(monkeypatch):
    monkeypatch.setattr(node_engine, "_NODE", [(20, 20, 2)])


def _install(tmp_path: Path, manifests: dict[str, dict], lockfile: object = "from manifests") -> tuple[Path, resolve.Resolved]:
    npm = tmp_path / "npm"
    install = npm / "_npx" / "0123456789abcdef"
    modules = install / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    for name, manifest in manifests.items():
        (modules / name).mkdir(parents=True)
        (modules / name / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0", **manifest}))
    if lockfile == "from manifests":
        lockfile = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"forger": "1.0.0"}}, **{
            f"node_modules/{name}": {"version": "1.0.0", **manifest} for name, manifest in manifests.items()}}}
    if lockfile is not None:
        (install / "package-lock.json").write_text(lockfile if isinstance(lockfile, str) else json.dumps(lockfile))
    found = resolve.Resolved("npx", "forger", "1.0.0", ("sh", "-c", "forger"), "host", str(modules / ".bin"))
    return npm, found


@pytest.mark.parametrize("named", ["forger", "dep", "@scope/dep"])
def test_a_package_of_the_install_declaring_a_newer_node_is_the_finding(tmp_path, named):
    npm, found = _install(tmp_path, {"forger": {}, named: {"engines": {"node": ">=22"}}})
    assert installing._findings(found, "host", npm) == (SAID.format(name=named, version="1.0.0"),)


def test_the_server_s_own_declaration_comes_before_its_dependencies(tmp_path):
    npm, found = _install(tmp_path, {"forger": {"engines": {"node": ">=22"}}, "@a/first": {"engines": {"node": ">=24"}}})
    assert installing._findings(found, "host", npm) == (SAID.format(name="forger", version="1.0.0"),)


def test_a_nested_dependency_is_named_by_its_own_name(tmp_path):
    lockfile = {"packages": {"node_modules/forger": {"version": "1.0.0"},
                             "node_modules/forger/node_modules/inner": {"version": "4.1.3", "engines": {"node": ">=22"}}}}
    npm, found = _install(tmp_path, {"forger": {}}, lockfile)
    assert installing._findings(found, "host", npm) == (SAID.format(name="inner", version="4.1.3"),)


@pytest.mark.parametrize("manifest", [{}, {"engines": {"node": ">=18"}}, {"engines": ">=22"}, {"engines": {"node": 22}},
                                      {"engines": {"node": "^18 || ^20 || >=22"}}])
def test_declarations_this_node_meets_or_that_are_not_npm_s_shape_are_no_finding(tmp_path, manifest):
    npm, found = _install(tmp_path, {"forger": manifest, "dep": manifest})
    assert installing._findings(found, "host", npm) == ()


@pytest.mark.parametrize("lockfile", [None, "not json", "[]", '{"packages": 3}', "{}"])
def test_without_a_readable_lockfile_the_server_s_own_manifest_decides(tmp_path, lockfile):
    npm, found = _install(tmp_path, {"forger": {"engines": {"node": ">=22"}}, "dep": {"engines": {"node": ">=24"}}},
                          lockfile)
    assert installing._findings(found, "host", npm) == (SAID.format(name="forger", version="1.0.0"),)


def test_a_package_named_by_nothing_installed_or_outside_the_install_is_no_finding(tmp_path):
    npm, found = _install(tmp_path, {"forger": {}}, lockfile={"packages": {"../../outside": {"engines": {"node": ">=22"}},
                                                                           "/etc": {"engines": {"node": ">=22"}},
                                                                           "node_modules/": {"engines": {"node": ">=22"}}}})
    assert installing._findings(found, "host", npm) == ()
    elsewhere = resolve.Resolved("npx", "forger", "1.0.0", ("sh", "-c", "forger"), "host",
                                 str(tmp_path / "elsewhere" / "node_modules" / ".bin"))
    assert installing._findings(elsewhere, "host", npm) == ()


@pytest.mark.parametrize("declared, finding", [(">=" + "9" * 5000, False), (">=22." + "1" * 5000, True)])
def test_a_declaration_with_more_digits_than_python_converts_is_no_crash(tmp_path, declared, finding):
    npm, found = _install(tmp_path, {"forger": {}, "dep": {"engines": {"node": declared}}})
    said = installing._findings(found, "host", npm)
    assert bool(said) is finding and all(len(s) <= machine_fault.MAX_CHARS for s in said)
    assert node_engine.unsatisfiable(declared) is False


def test_a_lockfile_nested_deeper_than_the_parser_goes_is_unreadable_not_a_crash(tmp_path):
    deep = '{"packages": {"node_modules/dep": {"engines": {"node": ">=24", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}}}"
    npm, found = _install(tmp_path, {"forger": {"engines": {"node": ">=22"}}}, deep)
    assert installing._findings(found, "host", npm) == (SAID.format(name="forger", version="1.0.0"),)
