"""servers.yaml loading and validation (harness/db/catalog.py, schemas/servers.schema.json)."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.db.catalog import SCHEMA_PATH, Catalog, CatalogError, Entry, load_catalog

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "servers.yaml"


@pytest.fixture(scope="module")
def real() -> Catalog:
    return load_catalog(SERVERS)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "servers.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def errors_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(CatalogError) as info:
        load_catalog(write(tmp_path, text))
    assert str(info.value) == "\n".join(info.value.errors)
    return info.value.errors


GOOD = """\
servers:
  - name: alpha
    command: npx -y alpha-mcp
  - name: beta
    command: uvx beta-mcp
"""


# --- the real catalog -------------------------------------------------------------------------

def test_schema_is_valid_draft_2020_12():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_real_catalog_loads_with_at_least_80_entries(real):
    assert len(real.entries) >= 80
    assert len({e.name for e in real.entries}) == len(real.entries)
    assert real.cycle_weeks == 3


def test_real_catalog_reference_is_memory_pinned_exactly(real):
    assert real.reference == "memory"
    ref = real.get("memory")
    assert ref is not None and ref.package == "@modelcontextprotocol/server-memory"
    spec = next(a for a in ref.argv() if a.startswith("@modelcontextprotocol/server-memory"))
    assert re.fullmatch(r"@modelcontextprotocol/server-memory@\d+(\.\d+)+", spec), spec


def test_real_catalog_mixes_launchers_and_every_command_splits(real):
    launchers = {e.launcher for e in real.entries}
    assert {"npx", "uvx", "url"} <= launchers
    for entry in real.entries:
        if entry.command is not None:
            assert entry.argv() == shlex.split(entry.command)
            assert entry.url is None and not entry.headers
        else:
            assert entry.url.startswith("https://")
            with pytest.raises(ValueError):
                entry.argv()


def test_real_catalog_launches_as_documented_or_says_why(real):
    """Each entry runs the command its package documents, pinned; an extra pin the harness adds
    (``uvx --with``), or a variable the documentation does not ask for (a skipped download), is
    justified in ``launchNote``. Configuration the documentation asks for (``NEO4J_URI``) needs none."""
    assert real.get("fetch").argv() == ["uvx", "mcp-server-fetch==2026.10.24"]
    assert real.get("time").argv() == ["uvx", "mcp-server-time==2026.10.19"]
    for entry in real.entries:
        if entry.command is not None and "--with" in entry.argv():
            assert entry.launch_note, f"{entry.name} launches unlike its documentation and does not say why"
    for name in ("puppeteer", "desktop-commander"):
        assert dict(real.get(name).set_env) == {"PUPPETEER_SKIP_DOWNLOAD": "1"} and real.get(name).launch_note
    assert real.get("git").needs_git is True
    assert real.get("github-legacy").env == ("GITHUB_PERSONAL_ACCESS_TOKEN",)


def test_real_catalog_not_applicable_entries_carry_evidence(real):
    declared = [e for e in real.entries if e.not_applicable]
    assert declared, "redis-legacy declares that the isolation provides no Redis"
    for entry in declared:
        assert entry.not_applicable.reason.strip() and entry.not_applicable.evidence.strip()


def test_entry_dataclass_defaults():
    entry = Entry(name="x", command="npx -y 'a b'")
    assert entry.argv() == ["npx", "-y", "a b"] and entry.launcher == "npx"
    assert entry.env == () and entry.needs_git is False and entry.timeout_seconds is None
    assert Entry(name="r", url="https://example.com/mcp").launcher == "url"


def test_minimal_catalog_defaults(tmp_path):
    catalog = load_catalog(write(tmp_path, GOOD))
    assert [e.name for e in catalog.entries] == ["alpha", "beta"]
    assert catalog.reference is None and catalog.cycle_weeks == 3


def test_full_entry_round_trips(tmp_path):
    catalog = load_catalog(write(tmp_path, """\
reference: remote
cycleWeeks: 4
servers:
  - name: remote
    url: https://example.com/mcp
    headers: [Authorization, X-Api-Key]
    category: vendor-official
    repo: https://github.com/example/remote
    timeoutSeconds: 12.5
    notApplicable: {reason: needs a database, evidence: ECONNREFUSED}
    notes: hi
"""))
    entry = catalog.entries[0]
    assert catalog.reference == "remote" and catalog.cycle_weeks == 4
    assert entry.headers == ("Authorization", "X-Api-Key") and entry.timeout_seconds == 12.5
    assert entry.not_applicable.evidence == "ECONNREFUSED" and entry.notes == "hi"


# --- bad catalogs: every message names file:line, entry #index, name and field -----------------

def only(errors: list[str]) -> str:
    assert len(errors) == 1, errors
    return errors[0]


def test_duplicate_name(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: alpha\n    command: npx other\n"))
    assert msg.startswith(f"{tmp_path / 'servers.yaml'}:6: entry #3 (name: \"alpha\"): ")
    assert 'field "name": duplicate of entry #1' in msg


def test_missing_command_and_url(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: gamma\n    package: gamma\n"))
    assert 'entry #3 (name: "gamma")' in msg
    assert 'missing both "command" and "url"' in msg


def test_both_command_and_url(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: gamma\n    command: npx g\n    url: https://g.example\n"))
    assert 'entry #3 (name: "gamma")' in msg and 'both "command" and "url" given' in msg


def test_unknown_field_suggests_the_known_one(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: gamma\n    command: npx g\n    timeout: 30\n"))
    assert ':8: entry #3 (name: "gamma"): unknown field "timeout"' in msg
    assert 'did you mean "timeoutSeconds"' in msg


def test_wrong_type_names_field_expectation_and_value(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: fetch\n    command: npx f\n    timeoutSeconds: fast\n"))
    assert msg == (f'{tmp_path / "servers.yaml"}:8: entry #3 (name: "fetch"): field "timeoutSeconds": '
                   'expected a number between 1 and 600, got "fast"')


@pytest.mark.parametrize("field, value, expected", [
    ("timeoutSeconds", "601", "a number between 1 and 600"),
    ("needsGit", '"yes"', "true or false"),
    ("env", "[github_token]", "environment variable names"),
    ("env", "GITHUB_TOKEN", "environment variable names"),
    ("repo", "not-a-url", "an http(s) URL"),
    ("notes", "[a, b]", "a string"),
])
def test_each_field_type_is_checked(tmp_path, field, value, expected):
    msg = only(errors_of(tmp_path, GOOD + f"  - name: gamma\n    command: npx g\n    {field}: {value}\n"))
    assert f'entry #3 (name: "gamma"): field "{field}"' in msg and expected in msg


def test_headers_only_with_url(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: gamma\n    command: npx g\n    headers: [X-Key]\n"))
    assert 'field "headers": only allowed on a url entry' in msg


def test_url_must_be_https(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: gamma\n    url: http://g.example/mcp\n"))
    assert 'field "url": expected an https:// URL, got "http://g.example/mcp"' in msg


def test_bad_slug_and_unsplittable_command(tmp_path):
    errs = errors_of(tmp_path, GOOD + "  - name: Gamma\n    command: npx 'unclosed\n")
    assert len(errs) == 2
    assert any('entry #3 (name: "Gamma"): field "name": expected a slug' in e for e in errs)
    assert any('field "command"' in e and "No closing quotation" in e for e in errs)


def test_not_applicable_needs_both_fields(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: g\n    command: npx g\n    notApplicable: {reason: r}\n"))
    assert 'field "notApplicable.evidence": required but missing' in msg


def test_duplicate_yaml_key_inside_an_entry(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: g\n    command: npx a\n    command: npx b\n"))
    assert ':8: entry #3 (name: "g"): field "command": given twice' in msg


def test_reference_must_name_an_entry(tmp_path):
    msg = only(errors_of(tmp_path, "reference: memry\n" + GOOD))
    assert ':1: top level: field "reference"' in msg and '"memry"' in msg


def test_yaml_syntax_error_reports_line(tmp_path):
    msg = only(errors_of(tmp_path, GOOD + "  - name: g\n    command: [npx\n"))
    assert re.search(r"servers\.yaml:\d+: YAML syntax error: ", msg), msg
    assert "line 7" in msg  # where the unterminated flow sequence starts


@pytest.mark.parametrize("text, needle", [
    ("", 'expected a mapping with a "servers" list, got null'),
    ("- a\n- b\n", 'expected a mapping with a "servers" list'),
    ("servers: 3\n", 'field "servers": expected a list of server entries, got 3'),
    ("servers:\n  - just-a-string\n", 'entry #1 (no name): expected a mapping, got "just-a-string"'),
    ("servers: []\nextra: 1\n", 'top level: unknown field "extra"'),
    ("servers: []\ncycleWeeks: 0\n", 'field "cycleWeeks": expected a whole number of weeks'),
])
def test_malformed_documents(tmp_path, text, needle):
    assert needle in only(errors_of(tmp_path, text))


def test_unreadable_file(tmp_path):
    with pytest.raises(CatalogError, match="missing.yaml: no such file. The catalog is servers.yaml"):
        load_catalog(tmp_path / "missing.yaml")
    with pytest.raises(CatalogError, match="cannot read"):
        load_catalog(tmp_path)  # a directory
    (tmp_path / "latin1.yaml").write_bytes(b"servers: [\xff]\n")
    with pytest.raises(CatalogError, match="cannot read"):
        load_catalog(tmp_path / "latin1.yaml")


def test_all_errors_reported_together_in_file_order(tmp_path):
    text = """\
reference: nobody
servers:
  - name: fetch
    command: npx f
    timeoutSeconds: fast
  - name: fetch
    url: https://f.example
  - name: lonely
  - name: extra
    command: npx e
    colour: blue
"""
    errs = errors_of(tmp_path, text)
    assert len(errs) == 5, errs
    assert 'top level: field "reference"' in errs[0]
    assert 'entry #1 (name: "fetch"): field "timeoutSeconds"' in errs[1]
    assert 'entry #2 (name: "fetch"): field "name": duplicate of entry #1' in errs[2]
    assert 'entry #3 (name: "lonely"): missing both "command" and "url"' in errs[3]
    assert 'entry #4 (name: "extra"): unknown field "colour"' in errs[4]
    lines = [int(re.match(r".*?servers\.yaml:(\d+):", e).group(1)) for e in errs]
    assert lines == sorted(lines)


def test_servers_yaml_is_plain_yaml_and_matches_schema_directly():
    """The committed catalog validates with any JSON Schema tool, not only through our loader."""
    doc = yaml.safe_load(SERVERS.read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc)


# --- never a traceback --------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_FIELDS = ["name", "command", "url", "package", "env", "headers", "category", "repo",
           "timeoutSeconds", "needsGit", "notApplicable", "notes", "bogus"]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 700), st.floats(allow_nan=True),
                     st.text(max_size=12), st.sampled_from(["npx -y x", "https://x.example", "a'b", "A_B"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["reason", "evidence", "x"]), inner, max_size=3)),
    max_leaves=6)
_entries = st.one_of(st.dictionaries(st.sampled_from(_FIELDS), _values, max_size=6), _scalars)
_docs = st.one_of(
    _values,
    st.fixed_dictionaries({"servers": st.lists(_entries, max_size=5)},
                          optional={"reference": _values, "cycleWeeks": _values, "other": _values}),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_docs)
def test_arbitrary_documents_load_or_raise_catalog_error(tmp_path, doc):
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    try:
        catalog = load_catalog(path)
    except CatalogError as exc:
        assert exc.errors and all(line.startswith(str(path)) for line in exc.errors)
    else:
        assert isinstance(catalog, Catalog)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_arbitrary_text_loads_or_raises_catalog_error(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_catalog(path)
    except CatalogError as exc:
        assert exc.errors


def test_set_env_reaches_the_target_and_only_names_are_recorded(tmp_path):
    from harness.db.targets import target_for
    from harness.probe import build_record as record
    from harness.probe.measure import measure_sync
    from tests.conftest import fixture_command

    path = tmp_path / "servers.yaml"
    path.write_text("servers:\n- name: fixed\n  command: " + fixture_command("well_behaved", "--describe-env", "ES_URL")
                    + "\n  timeoutSeconds: 10\n  setEnv:\n    ES_URL: http://localhost:9200\n")
    entry = load_catalog(path).entries[0]
    assert entry.set_env == (("ES_URL", "http://localhost:9200"),)
    measurement = measure_sync(target_for(entry), dual=False)
    assert "http://localhost:9200" in str(measurement.capture.tools)  # the server saw the value
    assert record.build(measurement)["envVarNames"] == ["ES_URL"]


def test_set_env_rejects_a_bad_name(tmp_path):
    path = tmp_path / "servers.yaml"
    path.write_text("servers:\n- name: bad\n  command: x\n  setEnv:\n    lower-case: '1'\n")
    with pytest.raises(CatalogError, match="setEnv"):
        load_catalog(path)


# --- bounded input and refused environment names ----------------------

@pytest.mark.parametrize("entry, field, words", [
    ('name: "gamma\\n"', "name", "U+000A"),
    ("name: " + "g" * 65, "name", "at most 64 characters allowed, got 65"),
    ('name: gamma\n    setEnv: {LD_PRELOAD: /x.so}', "setEnv.LD_PRELOAD", "refused: it changes how the dynamic loader"),
    ('name: gamma\n    setEnv: {GLIBC_TUNABLES: x}', "setEnv.GLIBC_TUNABLES", "refused"),
    ('name: gamma\n    setEnv: {PYTHONSTARTUP: /x.py}', "setEnv.PYTHONSTARTUP", "refused"),
    ('name: gamma\n    setEnv: {HTTPS_PROXY: "http://evil:8080"}', "setEnv.HTTPS_PROXY", "set by the harness"),
    ("name: gamma\n    env: [API_KEY, DYLD_INSERT_LIBRARIES]", "env", "item #2"),
    ('name: gamma\n    setEnv: {FOO: "a\\u202eb"}', "setEnv.FOO", "U+202E"),
    ("name: gamma\n    timeoutSeconds: " + "1" * 40, "timeoutSeconds", "number longer than 32 characters"),
    ("name: gamma\n    notes: " + "[" * 40 + "]" * 40, "notes", "nested deeper than 32 levels"),
], ids=["newline", "65-chars", "ld-preload", "glibc-tunables", "pythonstartup", "proxy", "dyld", "bidi", "digits",
        "depth"])
def test_bounded_entries_fail_with_one_line_naming_the_field(tmp_path, entry, field, words):
    msg = only(errors_of(tmp_path, GOOD + f"  - {entry}\n    command: npx -y g\n"))
    assert f'field "{field}"' in msg and words in msg and "\n" not in msg, msg
    assert "entry #3" in msg


def test_every_real_entry_passes_the_environment_rules(real):
    from harness.probe import envnames

    for entry in real.entries:
        for name in list(entry.env) + [n for n, _ in entry.set_env]:
            assert envnames.problem(name) is None, (entry.name, name)


def test_real_catalog_lists_each_package_once(real):
    """Two entries launching the same package would publish one server twice under two names."""
    seen: dict[str, str] = {}
    for entry in real.entries:
        if entry.package:
            key = entry.package.lower()
            assert key not in seen, f"{entry.name} and {seen[key]} both launch {entry.package}"
            seen[key] = entry.name
