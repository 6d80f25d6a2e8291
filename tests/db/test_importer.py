"""mcp-context-cost import (harness/db/importer.py, import_sources.py, package_meta.py, catalog_text.py): candidates
from the registry's server.json format and package lists, proposals checked against recorded npm
and PyPI metadata of real packages, triage by a real launch, and servers.yaml edited as text."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import subprocess
import sys

import pytest
import yaml

from harness.db import catalog_text, import_sources, importer, package_meta
from harness.db.catalog import load_catalog
from harness.db.import_sources import Candidate
from harness.db.importer import Proposal
from harness.probe import node_engine
from tests.conftest import REPO, fixture_command

FIXTURES = REPO / "tests" / "fixtures" / "registry"
RECORDED = package_meta.RecordedSource(FIXTURES / "packages")
CATALOG = load_catalog(REPO / "servers.yaml")
EMPTY = dataclasses.replace(CATALOG, entries=(), reference=None)


def by_package(candidates):
    return {c.package: c for c in candidates}


# ---------------------------------------------------------------- reading sources

def test_registry_page_takes_the_latest_usable_package_of_each_server():
    found = import_sources.from_server_json(json.loads((FIXTURES / "servers-page.json").read_text()))
    got = by_package(found)
    # the older gitlab version (isLatest false), the templated remote and the OCI-only server give nothing
    assert list(got) == ["@zereight/mcp-gitlab", "awslabs.aws-api-mcp-server", "nx-mcp", "@pandacss/mcp",
                         "https://huggingface.co/mcp"]
    gitlab = got["@zereight/mcp-gitlab"]
    assert (gitlab.version, gitlab.env, gitlab.set_env) == (
        "2.1.64", ("GITLAB_PERSONAL_ACCESS_TOKEN",), (("GITLAB_API_URL", "https://gitlab.com/api/v4"),))
    assert got["awslabs.aws-api-mcp-server"].set_env == (("AWS_REGION", "us-east-1"),)
    assert got["nx-mcp"].args == () and got["nx-mcp"].problem is None  # an optional argument is left out
    assert got["@pandacss/mcp"].problem == "requires argument --config with no default"
    assert got["https://huggingface.co/mcp"].registry == "url"


def test_one_server_json_document_and_an_array_of_them():
    single = json.loads((FIXTURES / "server.json").read_text())
    (time,) = import_sources.from_server_json(single)
    assert (time.registry, time.package, time.version, time.args) == ("pypi", "mcp-server-time", "2026.10.19", ())
    assert [c.package for c in import_sources.from_server_json([single, single])] == ["mcp-server-time"] * 2
    assert import_sources.from_server_json("not a server") == []


def test_read_candidates_tells_json_from_a_package_list_and_names_a_bad_file(tmp_path):
    assert [c.package for c in import_sources.read_candidates(str(FIXTURES / "server.json"))] == ["mcp-server-time"]
    bad = tmp_path / "page.json"
    bad.write_text("{ not json")
    with pytest.raises(import_sources.ImportInputError, match="page.json: not JSON"):
        import_sources.read_candidates(str(bad))
    with pytest.raises(import_sources.ImportInputError, match="cannot read"):
        import_sources.read_candidates(str(tmp_path / "missing.tsv"))
    no_columns = tmp_path / "list.tsv"
    no_columns.write_text("package\tversion\nx\t1\n")
    with pytest.raises(import_sources.ImportInputError, match="columns name and registry"):
        import_sources.read_candidates(str(no_columns))


def test_the_popular_candidates_list_reads_as_52_packages_with_their_args_and_env():
    # a copy of ../shared/catalog/candidates-popular.tsv, so a clone with nothing beside it passes
    found = import_sources.read_candidates(str(REPO / "tests" / "fixtures" / "catalog" / "candidates-popular.tsv"))
    got = by_package(found)
    assert len(found) == 52  # 53 rows, @instantdb/mcp twice
    assert got["@instantdb/mcp"].env == ("INSTANT_ACCESS_TOKEN",)  # the second row's env joins the first
    assert got["@azure-devops/mcp"].args == ("contoso",)
    assert got["@larksuiteoapi/lark-mcp"].args == ("mcp", "-a", "cli_dummy", "-s", "dummysecret")
    assert got["@winor30/mcp-server-datadog"].env == ("DATADOG_API_KEY", "DATADOG_APP_KEY")
    assert got["mcp-server-duckdb"].args == ("--db-path", "./rw3.duckdb")
    assert got["awslabs-aws-api-mcp-server"].args == ()  # uvx --from X==v cmd: nothing after the command
    assert got["web-forager"].args == ("serve",)


def test_names_on_the_command_line():
    got = import_sources.from_names(["@scope/pkg@1.2.3", "plain", "plain-v@0.1.0"], ["some-mcp==0.4.0", "other"])
    assert [(c.registry, c.package, c.version) for c in got] == [
        ("npm", "@scope/pkg", "1.2.3"), ("npm", "plain", None), ("npm", "plain-v", "0.1.0"),
        ("pypi", "some-mcp", "0.4.0"), ("pypi", "other", None)]


# ---------------------------------------------------------------- proposals

def test_proposals_from_the_registry_page_are_pinned_entries():
    found = import_sources.from_server_json(json.loads((FIXTURES / "servers-page.json").read_text()))
    props = {p.candidate.package: p for p in importer.propose(found, EMPTY, RECORDED)}
    assert props["@zereight/mcp-gitlab"].entry == {
        "name": "zereight-mcp-gitlab", "command": "npx -y @zereight/mcp-gitlab@2.1.64",
        "package": "@zereight/mcp-gitlab", "env": ["GITLAB_PERSONAL_ACCESS_TOKEN"],
        "setEnv": {"GITLAB_API_URL": "https://gitlab.com/api/v4"}, "category": "community",
        "repo": "https://github.com/zereight/gitlab-mcp"}
    aws = props["awslabs.aws-api-mcp-server"].entry
    assert aws["command"] == "uvx awslabs.aws-api-mcp-server@1.5.6" and aws["repo"] == "https://github.com/awslabs/mcp"
    assert props["nx-mcp"].entry["category"] == "vendor-official"  # a verified domain's namespace
    assert props["nx-mcp"].entry["command"] == "npx -y nx-mcp@0.25.0"
    assert props["@pandacss/mcp"].entry is None and "requires argument" in props["@pandacss/mcp"].reason
    assert props["https://huggingface.co/mcp"].entry == {"name": "hf-mcp-server", "url": "https://huggingface.co/mcp",
                                                         "category": "vendor-official"}


def test_proposals_against_the_real_catalog_skip_what_it_holds():
    cands = [Candidate("pypi", "mcp-server-time", "2026.10.19"), Candidate("npm", "@modelcontextprotocol/server-memory"),
             Candidate("url", "https://huggingface.co/mcp")]
    assert [p.reason for p in importer.propose(cands, CATALOG, RECORDED)] == ["already in the catalog"] * 3


def test_proposal_variants_from_real_metadata():
    cands = [Candidate("npm", "@mizchi/lsmcp", "0.10.0"), Candidate("npm", "nx-mcp"),
             Candidate("pypi", "web-forager", "4.0.0", args=("serve",)), Candidate("npm", "no-such-package"),
             Candidate("npm", "@pandacss/mcp", "1.12.1", args=("--cwd", "a dir"))]
    props = importer.propose(cands, EMPTY, RECORDED)
    assert "does not say it is an MCP server" in props[0].reason  # no keyword, no SDK, no "mcp" word
    assert props[1].entry["command"] == "npx -y nx-mcp@0.25.0"  # no version given: the newest
    assert props[2].entry["command"] == "uvx web-forager@4.0.0 serve"
    assert props[3].entry is None and "no recorded document" in props[3].reason
    assert props[4].entry["command"] == "npx -y @pandacss/mcp@1.12.1 --cwd 'a dir'"  # quoted for shlex


def test_launch_commands_for_bins_and_console_scripts():
    base = package_meta.Package("npm", "@acme/tools", "1.0.0", "1.0.0")
    cand = Candidate("npm", "@acme/tools")
    assert importer.launch_command(cand, dataclasses.replace(base, bins={"acme": "x.js"}))[0] == "npx -y @acme/tools@1.0.0"
    several = dataclasses.replace(base, bins={"acme-cli": "a.js", "acme-mcp": "b.js"})
    assert importer.launch_command(cand, several)[0] == "npx -y --package=@acme/tools@1.0.0 acme-mcp"
    assert "several bins" in importer.launch_command(cand, dataclasses.replace(base, bins={"a": "1", "b": "2"}))[1]
    assert "declares no bin" in importer.launch_command(cand, base)[1]
    py = package_meta.Package("pypi", "Acme_Tools", "2.0", "2.0", bins={"acme-server": "acme:main"})
    assert importer.launch_command(Candidate("pypi", "Acme_Tools"), py)[0] == "uvx --from Acme_Tools==2.0 acme-server"


@pytest.mark.parametrize("package, name", [("@pandacss/mcp", "pandacss-mcp"), ("@testsprite/testsprite-mcp", "testsprite-mcp"),
                                           ("@z_ai/mcp-server", "z-ai-mcp-server"), ("awslabs.aws-api-mcp-server",
                                                                                    "awslabs-aws-api-mcp-server"),
                                           ("@@@", "server")])
def test_slugs(package, name):
    assert importer.slug(package) == name


def test_names_stay_unique():
    cands = [Candidate("npm", "nx-mcp"), Candidate("npm", "nx-mcp", "0.25.0")]
    props = importer.propose(cands, EMPTY, RECORDED)
    assert props[1].reason == "already in the catalog"  # the same package twice is proposed once
    taken = {"nx-mcp"}
    assert importer._unique("nx-mcp", taken) == "nx-mcp-2" and "nx-mcp-2" in taken


def test_package_metadata_parsing_of_real_documents():
    gitlab = RECORDED.npm("@zereight/mcp-gitlab", "2.1.64")
    assert gitlab.bins == {"mcp-gitlab": "build/index.js", "zereight-mcp-gitlab": "build/index.js"}
    assert gitlab.runtime == ">=18.17.0" and gitlab.is_mcp
    grafana = RECORDED.pypi("mcp-grafana", "2.1.1")
    assert grafana.bins == {"mcp-grafana": "mcp_grafana:main"} and grafana.repository == "https://github.com/grafana/mcp-grafana"
    assert RECORDED.pypi("pdf-tools-mcp").runtime == ">=3.12"
    with pytest.raises(package_meta.MetadataError, match="no release 9.9.9"):
        RECORDED.pypi("pdf-tools-mcp", "9.9.9")
    assert package_meta.newest(["1.0.0", "1.10.0", "1.9.0", "2.0.0rc1", "junk"]) == "1.10.0"
    assert package_meta._repo_url("git+ssh://git@github.com/a/b.git") == "https://github.com/a/b"
    assert package_meta._repo_url("github:a/b") == "https://github.com/a/b"


# ---------------------------------------------------------------- triage

def _record(status, notes=(), **extra):
    return {"status": status, "notes": list(notes), "toolCount": 3, "totalTokens": 100, **extra}


def test_classify_outcomes():
    assert importer.classify(_record("measured"), None) == ("lists-tools", "listed 3 tools")
    assert importer.classify(_record("auth-required", ["it said: 'API key required'"]), None)[0] == "needs-credential"
    assert importer.classify(_record("startup-failure", ["x"], environmentEvidence="No interpreter found"), None)[0] \
        == "needs-runtime"
    assert importer.classify(_record("startup-failure", ["npm warn EBADENGINE Unsupported engine"]), None)[0] \
        == "needs-runtime"
    dependency = "the install warned: dep@4.1.3 declares engines.node '>=22'; this machine has v20.20.2"
    assert importer.classify(_record("startup-failure", ["exit code 1", dependency]), None)[0] == "needs-runtime"
    assert importer.classify(_record("startup-failure", ["exit code 1"]), None)[0] == "broken"
    needs_22 = RECORDED.npm("@bytebase/dbhub", "1.4.0")
    outcome, evidence = importer.classify(_record("startup-failure", ["No such built-in module: node:sqlite"]), needs_22)
    assert outcome == "needs-runtime" and evidence.startswith("declares node >=22.5.0; this machine has ")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm's own semver is the oracle")
def test_node_ranges_by_npms_semver():
    assert node_engine.satisfies(">=18") and node_engine.satisfies("^20.0.0 || >=22")
    assert not node_engine.satisfies(">=99") and not node_engine.satisfies("<10")


def test_triage_launches_each_proposal_once_and_sorts_it(monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    props = [Proposal(Candidate("npm", "a"), {"name": "lists", "command": fixture_command("well_behaved")}),
             Proposal(Candidate("npm", "b"), {"name": "asks", "command": fixture_command("needs_api_key"),
                                              "env": ["EXAMPLE_API_KEY"]}),
             Proposal(Candidate("npm", "c"), {"name": "dies", "command": fixture_command("init_then_exit")}),
             Proposal(Candidate("npm", "d"), reason="not proposed")]
    said = []
    asyncio.run(importer.triage(props, "host", concurrency=2, timeout_seconds=20, say=said.append))
    assert [p.outcome for p in props] == ["lists-tools", "needs-credential", "broken", None]
    assert props[0].evidence == "listed 2 tools" and "EXAMPLE_API_KEY" in props[1].evidence
    assert len(said) == 3
    chosen = importer.accepted(props)
    assert [p.name for p in chosen] == ["asks", "lists"]  # by name: a stable diff
    written = importer.with_triage(chosen[1], __import__("datetime").date(2026, 12, 1))
    assert written["triage"] == {"outcome": "lists-tools", "date": "2026-12-01", "evidence": "listed 2 tools"}


@pytest.mark.parametrize("notes, declared, asked", [
    (["it said: 'The REPLICATE_API_TOKEN environment variable is missing or empty'"], [], ["REPLICATE_API_TOKEN"]),
    (["it said: 'Error: BITBUCKET_USERNAME and either BITBUCKET_APP_PASSWORD (Cloud) or BITBUCKET_TOKEN'"],
     ["BITBUCKET_USERNAME"], ["BITBUCKET_APP_PASSWORD", "BITBUCKET_TOKEN"]),
    (["it said: 'No OAuth credentials found. Set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET, or $GOOGLE_CLIENT_ID'"],
     [], ["GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"]),
    (["it said: 'API key required (401)'"], [], []),  # names nothing: nothing to give it
    (["ERR_MODULE_NOT_FOUND while NODE_OPTIONS, UV_CACHE_DIR, MCP_CONTEXT_COST_X set; needs A_B C_D E_F G_H I_J"],
     [], ["A_B", "C_D", "E_F", "G_H"]),  # toolchain names are not asks; at most four
])
def test_the_variables_an_auth_ask_names(notes, declared, asked):
    entry = {"name": "x", "command": "npx -y x@1.0.0", "env": declared} if declared else {"name": "x"}
    assert importer.named_variables(_record("auth-required", notes), entry) == asked


@pytest.mark.parametrize("notes, asked", [
    (["the server exited before replying (phase: initialize, exit code 1); stderr ends: "
      "'Error: NOTION_PAGE_ID environment variable is required'"], ["NOTION_PAGE_ID"]),
    (["stderr ends: 'Missing required environment variable: METABASE_URL, METABASE_API_KEY'"],
     ["METABASE_URL", "METABASE_API_KEY"]),
    (["stderr ends: 'Config error. Please set STORYBOOK_URL to your instance'"], ["STORYBOOK_URL"]),
    (["stderr ends: 'Error: Environment variable DOKPLOY_URL is not defined'"], ["DOKPLOY_URL"]),
    (["stderr ends: 'Krutrim Cloud authentication requires KRUTRIM_API_KEY.'"], ["KRUTRIM_API_KEY"]),
    (["stderr ends: 'Fatal error: Error: 請設定環境變數: GOOGLE_APPLICATION_CREDENTIALS=/path/to/credentials.json'"],
     ["GOOGLE_APPLICATION_CREDENTIALS"]),
    (["stderr ends: '错误：请设置 DEEPSEEK_API_KEY'"], ["DEEPSEEK_API_KEY"]),
    (["stderr ends: 'FEISHU_APP_ID 未设置，无法启动'"], ["FEISHU_APP_ID"]),
    (["stderr ends: '缺少环境变量 DINGTALK_APP_KEY'"], ["DINGTALK_APP_KEY"]),
    (["stderr ends: '启动失败: LOG_LEVEL=debug; 连接超时'"], []),  # a Chinese failure that asks for nothing
    # names that a failure mentions without asking for them are not asks
    (["stderr ends: 'LOG_LEVEL=debug; TypeError: cannot read FOO_BAR of undefined'"], []),
    (["ERR_MODULE_NOT_FOUND: required module missing; NODE_OPTIONS is not set"], []),
])
def test_the_variables_a_failure_says_are_required(notes, asked):
    rec = _record("startup-failure", notes)
    assert importer.named_variables(rec, {"name": "x"}, asking_only=True) == asked
    assert importer.named_variables(rec, {"name": "x", "env": asked}, asking_only=True) == []


def test_named_variables_join_env_in_the_catalogs_field_order():
    entry = {"name": "x", "command": "c", "package": "p", "category": "community", "repo": "https://r"}
    assert list(importer.with_env(entry, ["A_B"])) == ["name", "command", "package", "env", "category", "repo"]
    more = importer.with_env({"name": "x", "command": "c", "env": ["A_B"], "setEnv": {"C": "1"}}, ["D_E"])
    assert more == {"name": "x", "command": "c", "env": ["A_B", "D_E"], "setEnv": {"C": "1"}}
    assert list(more) == ["name", "command", "env", "setEnv"]


def test_triage_gives_a_server_the_variables_it_asked_for(monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    props = [Proposal(Candidate("npm", "a"), {"name": "asks-by-name", "command": fixture_command(
                 "needs_named_variable", "ACME_API_TOKEN"), "category": "community"}),
             Proposal(Candidate("npm", "b"), {"name": "wants-a-real-key", "command": fixture_command("needs_api_key"),
                                              "category": "community"}),
             Proposal(Candidate("npm", "c"), {"name": "names-nothing", "command": fixture_command("needs_api_key"),
                                              "env": ["EXAMPLE_API_KEY"]})]
    asyncio.run(importer.triage(props, "host", concurrency=2, timeout_seconds=20))
    assert props[0].outcome == "lists-tools" and props[0].entry["env"] == ["ACME_API_TOKEN"]
    assert props[0].evidence == "listed 2 tools, with ACME_API_TOKEN set as its first launch asked"
    assert list(props[0].entry) == ["name", "command", "env", "category"]
    # a dummy value does not satisfy it: still a credential ask, with the name its users must set
    assert props[1].outcome == "needs-credential" and props[1].entry["env"] == ["EXAMPLE_API_KEY"]
    assert props[1].evidence.endswith("with EXAMPLE_API_KEY set as its first launch asked")
    assert props[2].outcome == "needs-credential" and props[2].entry["env"] == ["EXAMPLE_API_KEY"]
    assert "as its first launch asked" not in props[2].evidence  # it asked for nothing undeclared


def test_triage_gives_a_failing_server_the_variable_it_says_is_required(monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    props = [Proposal(Candidate("npm", name), {"name": name.lower().replace("_", "-"),
                                                "command": fixture_command("needs_named_variable", name)})
             for name in ("ACME_SITE_URL", "NOTION_PAGE_ID")]
    asyncio.run(importer.triage(props, "host", concurrency=2, timeout_seconds=20))
    for prop, name in zip(props, ("ACME_SITE_URL", "NOTION_PAGE_ID")):
        assert prop.outcome == "lists-tools" and prop.entry["env"] == [name]
        assert prop.evidence == f"listed 2 tools, with {name} set as its first launch asked"


# ---------------------------------------------------------------- servers.yaml as text

@pytest.mark.slow
def test_appending_keeps_every_existing_byte_and_loads(tmp_path):
    text = (REPO / "servers.yaml").read_text()
    entry = {"name": "zz-new", "command": "npx -y zz-new@1.0.0", "package": "zz-new", "env": ["ZZ_KEY"],
             "category": "community",
             "triage": {"outcome": "needs-credential", "date": "2026-12-01", "evidence": "said: 'ZZ_KEY' #x: y"}}
    new = catalog_text.append_entries(text, [entry])
    assert new.startswith(text) and new[len(text):].startswith("\n- name: zz-new\n")
    path = tmp_path / "servers.yaml"
    catalog_text.write_checked(path, new)
    assert load_catalog(path).get("zz-new").env == ("ZZ_KEY",)
    assert catalog_text.append_entries(text, []) == text


def test_the_catalog_is_written_the_way_it_is_dumped():
    # every entry of the real file re-dumps to its own bytes: appended entries look like the rest
    text = (REPO / "servers.yaml").read_text()
    doc = yaml.safe_load(text)
    body = "\n".join(catalog_text.dump_entry(e) for e in doc["servers"])
    assert text.endswith(body)


@pytest.mark.slow
def test_replace_field_changes_one_scalar_only():
    text = (REPO / "servers.yaml").read_text()
    new = catalog_text.replace_field(text, "memory", "command", "npx -y @modelcontextprotocol/server-memory@2026.9.1")
    diff = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
    assert diff == [("  command: npx -y @modelcontextprotocol/server-memory@2026.8.31",
                     "  command: npx -y @modelcontextprotocol/server-memory@2026.9.1")]
    long = "npx -y pkg@1.0.0 " + " ".join(f"--flag-{i}" for i in range(30))
    folded = catalog_text.replace_field(text, "memory", "command", long)
    assert next(e for e in yaml.safe_load(folded)["servers"] if e["name"] == "memory")["command"] == long
    with pytest.raises(catalog_text.EditError, match="no entry named"):
        catalog_text.replace_field(text, "nope", "command", "x")
    with pytest.raises(catalog_text.EditError, match="no scalar field"):
        catalog_text.replace_field(text, "memory", "env", "x")


def test_append_refuses_a_file_it_cannot_append_to():
    with pytest.raises(catalog_text.EditError, match="not the last thing"):
        catalog_text.append_entries("servers:\n- name: a\n  command: x\nreference: a\n", [{"name": "b", "command": "y"}])
    with pytest.raises(catalog_text.EditError, match='no "servers" list'):
        catalog_text.append_entries("reference: a\n", [{"name": "b", "command": "y"}])


def test_a_bad_triage_field_is_named_by_the_catalog_loader(tmp_path):
    path = tmp_path / "servers.yaml"
    path.write_text("servers:\n- name: a\n  command: npx -y a@1.0.0\n  triage:\n    outcome: fine\n    date: '2026-12-01'\n")
    with pytest.raises(Exception, match='field "triage'):
        load_catalog(path)


# ---------------------------------------------------------------- the command

def _cli(*args, cwd=None):
    done = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    return done.returncode, done.stdout, done.stderr


def test_import_dry_run_prints_entries_and_touches_nothing(tmp_path):
    catalog = tmp_path / "servers.yaml"
    catalog.write_text("# comments stay\nservers:\n\n- name: huggingface\n  url: https://huggingface.co/mcp\n")
    before = catalog.read_bytes()
    report = tmp_path / "report.json"
    code, out, err = _cli("import", str(FIXTURES / "servers-page.json"), "--dry-run", "--catalog", str(catalog),
                          "--metadata", str(FIXTURES / "packages"), "--report", str(report))
    assert code == 0, err
    assert "- name: zereight-mcp-gitlab" in out and "already in the catalog" in err  # huggingface is catalogued
    assert catalog.read_bytes() == before
    rows = json.loads(report.read_text())
    assert {r["outcome"] for r in rows} == {"proposed", "not-proposed"}


@pytest.mark.slow
def test_import_bad_input_is_one_line_and_exit_2(tmp_path):
    code, _, err = _cli("import", str(tmp_path / "nothing.json"), "--catalog", str(REPO / "servers.yaml"))
    assert code == 2 and err.startswith("error: ") and "cannot read" in err
    code, _, err = _cli("import", "--catalog", str(REPO / "servers.yaml"))
    assert code == 2 and "no candidates" in err


@pytest.mark.slow
def test_import_for_real_adds_a_listing_npm_server(tmp_path):
    catalog = tmp_path / "servers.yaml"
    catalog.write_text("servers:\n\n- name: memory\n  command: npx -y @modelcontextprotocol/server-memory@2026.8.31\n")
    md = tmp_path / "report.md"
    code, out, err = _cli("import", "--npm", "nx-mcp@0.25.0", "--catalog", str(catalog), "--markdown", str(md),
                          "--timeout", "120")
    assert code == 0, err
    entry = load_catalog(catalog).get("nx-mcp")
    assert entry.command == "npx -y nx-mcp@0.25.0"
    assert yaml.safe_load(catalog.read_text())["servers"][1]["triage"]["outcome"] == "lists-tools"
    assert "| nx-mcp | npm | lists-tools | yes |" in md.read_text()


def test_what_the_catalog_would_refuse_is_never_launched():
    cands = [Candidate("npm", "nx-mcp", "0.25.0", env=("LD_PRELOAD",)),
             Candidate("npm", "@pandacss/mcp", "1.12.1", args=("--name", "evil\u202etxt"))]
    props = importer.propose(cands, EMPTY, RECORDED)
    assert all(p.entry is None for p in props)
    assert all(p.reason.startswith("the catalog would refuse it: ") for p in props), [p.reason for p in props]


def test_a_registry_url_is_read_page_by_page(tmp_path):
    import http.server
    import threading
    from urllib.parse import parse_qs, urlparse

    page = json.loads((FIXTURES / "servers-page.json").read_text())
    first = {"servers": page["servers"][:3], "metadata": {"nextCursor": "a b/c"}}
    second = {"servers": page["servers"][3:], "metadata": {"nextCursor": "a b/c"}}  # loops back: not followed

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            cursor = parse_qs(urlparse(self.path).query).get("cursor")
            body = json.dumps(second if cursor == ["a b/c"] else first).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v0/servers?limit=3"
        got = [c.package for c in import_sources.read_candidates(url)]
    finally:
        server.shutdown()
        server.server_close()
    assert got == ["@zereight/mcp-gitlab", "awslabs.aws-api-mcp-server", "nx-mcp", "@pandacss/mcp",
                   "https://huggingface.co/mcp"]
    with pytest.raises(import_sources.ImportInputError, match="127.0.0.1"):
        import_sources.read_candidates(url)  # the server is gone: one line naming the URL
