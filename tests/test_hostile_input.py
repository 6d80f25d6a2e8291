"""Catalog, record and command input that used to crash or exhaust the harness.

Every bad input runs the real command as a subprocess under a memory limit (``RLIMIT_AS``) and a
timeout, and must end in exit 2 (the Action: exit 1, its documented failure code) with exactly one
line on stderr (one ``::error`` annotation for the Action) that names the field — never a
traceback, never a hang.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO

MEMORY_LIMIT = 768 * 1024 * 1024
TIMEOUT = 60

LAUGHS = "\n".join([f'a: &a [{",".join(["lol"] * 9)}]'] + [
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"
ENTRY = "servers:\n  - name: bad\n    command: npx -y bad-mcp\n"


def bounded_run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=limit)


def cli(*args: str) -> subprocess.CompletedProcess:
    return bounded_run([sys.executable, "-m", "harness.cli", *args])


def one_error_line(done: subprocess.CompletedProcess, *words: str, trailer: str | None = None) -> str:
    """The one line on stderr of a run that exited 2, checked for ``words`` and for raw control
    characters; ``trailer`` is a fixed line a command adds after it (sweep's "nothing published")."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.splitlines()
    if trailer is not None and lines[-1:] == [trailer]:
        lines = lines[:-1]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert all(c == "\t" or c >= " " for c in lines[0]), repr(lines[0])
    return lines[0]


def catalog_file(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "servers.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return str(path)


# --- servers.yaml ---------------------------------------------------------------------------------

BAD_CATALOGS = {
    # alias expansion
    "laughs-top-level": (LAUGHS, ["top level", "nodes once aliases are expanded"]),
    "laughs-in-notes": (ENTRY + "    notes:\n" + "".join("      " + x + "\n" for x in LAUGHS.splitlines()),
                        ['entry #1 (name: "bad")', 'field "notes', "aliases are expanded"]),
    # nesting
    "deep-flow": (ENTRY + "    notes: " + "[" * 20_000 + "]" * 20_000 + "\n",
                  ['entry #1 (name: "bad")', 'field "notes"', "nested deeper than"]),
    "deep-block": (ENTRY + "    notes:\n      " + "- " * 20_000 + "x\n", ['field "notes"', "nested deeper than"]),
    "deep-mapping": (ENTRY + "    setEnv: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n",
                     ['field "setEnv', "nested deeper than"]),
    # NUL and other control characters
    "nul-in-command": (ENTRY.replace("npx -y bad-mcp", '"npx\\0 -y bad-mcp"'), ['field "command"', "U+0000"]),
    "nul-in-set-env": (ENTRY + '    setEnv:\n      FOO: "a\\x00b"\n', ['field "setEnv.FOO"', "U+0000"]),
    "nul-in-name": (ENTRY.replace("name: bad", 'name: "bad\\u0000"'), ['field "name"', "expected a slug"]),
    "raw-nul-byte": ((ENTRY + "    notes: a\x00b\n").encode(), ["YAML syntax error", "#x0000"]),
    "escape-in-url": ('servers:\n  - name: bad\n    url: "https://h/\\e]0;pwned\\a"\n', ['field "url"', "U+001B"]),
    "bidi-in-package": (ENTRY + '    package: "a\\u202eb"\n', ['field "package"', "U+202E"]),
    "lone-surrogate": (ENTRY + '    notes: "\\ud800"\n', ['field "notes"', "U+D800"]),
    # numbers
    "long-timeout": (ENTRY + "    timeoutSeconds: " + "9" * 5000 + "\n", ['field "timeoutSeconds"', "number longer"]),
    "long-float": (ENTRY + "    timeoutSeconds: " + "1" * 5000 + ".0\n", ['field "timeoutSeconds"', "number longer"]),
    "long-cycle": ("cycleWeeks: " + "7" * 5000 + "\n" + ENTRY, ["top level", "number longer"]),
    "long-hex": (ENTRY + "    timeoutSeconds: 0x" + "f" * 5000 + "\n", ['field "timeoutSeconds"', "number longer"]),
    # names
    "name-trailing-newline": (ENTRY.replace("name: bad", 'name: "bad\\n"'), ['field "name"', "U+000A"]),
    "name-300-chars": (ENTRY.replace("name: bad", "name: " + "a" * 300), ['field "name"', "at most 64"]),
    "name-cyrillic": (ENTRY.replace("name: bad", "name: b\u0430d"), ['field "name"', "expected a slug"]),
    "name-traversal": (ENTRY.replace("name: bad", "name: ../../etc"), ['field "name"', "expected a slug"]),
    # environment names
    "set-env-ld-preload": (ENTRY + "    setEnv:\n      LD_PRELOAD: /tmp/x.so\n",
                           ['field "setEnv.LD_PRELOAD"', "refused", "dynamic loader"]),
    "set-env-node-options": (ENTRY + "    setEnv:\n      NODE_OPTIONS: --require /tmp/x.js\n",
                             ['field "setEnv.NODE_OPTIONS"', "refused"]),
    "set-env-bash-env": (ENTRY + "    setEnv:\n      BASH_ENV: /tmp/x.sh\n", ['field "setEnv.BASH_ENV"', "refused"]),
    "set-env-npm-config": (ENTRY + "    setEnv:\n      NPM_CONFIG_NODE_OPTIONS: --require=/x\n",
                           ['field "setEnv.NPM_CONFIG_NODE_OPTIONS"', "refused"]),
    "set-env-path": (ENTRY + "    setEnv:\n      PATH: /tmp/evil\n", ['field "setEnv.PATH"', "set by the harness"]),
    "env-pythonpath": (ENTRY + "    env: [PYTHONPATH]\n", ['field "env" item #1', "refused"]),
    "env-ssh-agent": (ENTRY + "    env: [SSH_AUTH_SOCK]\n", ['field "env" item #1', "host capability"]),
    "env-gconv": (ENTRY + "    env: [OK_KEY, GCONV_PATH]\n", ['field "env" item #2', "refused"]),
}


@pytest.mark.parametrize("case", list(BAD_CATALOGS))
def test_bad_catalog_is_one_line_exit_2_in_bounded_time_and_memory(case, tmp_path):
    text, words = BAD_CATALOGS[case]
    one_error_line(cli("slice", "--catalog", catalog_file(tmp_path, text)), *words)  # bounded_run's bound fails it


@pytest.mark.parametrize("case", ["laughs-in-notes", "set-env-ld-preload", "name-trailing-newline"])
def test_measure_refuses_the_same_catalogs(case, tmp_path):
    text, words = BAD_CATALOGS[case]
    one_error_line(cli("measure", "--server", "bad", "--catalog", catalog_file(tmp_path, text),
                       "--results", str(tmp_path / "r"), "--badges", str(tmp_path / "b")), *words)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "too-large"])
def test_catalog_must_be_a_bounded_regular_file(kind, tmp_path):
    path = {"fifo": tmp_path / "fifo", "dev-zero": "/dev/zero", "directory": tmp_path, "too-large": tmp_path / "big"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    if kind == "too-large":
        with open(path, "wb") as f:
            f.truncate(64 << 20)
    one_error_line(cli("slice", "--catalog", str(path)), "cannot read")


# --- measure's own flags --------------------------------------------------------------------------

@pytest.mark.parametrize("flags,words", [
    (["--name", "bad\n"], ["--name", "not a valid slug"]),
    (["--name", "a" * 300], ["--name", "at most 64"]),
    (["--name", "b\u0430d"], ["--name", "not a valid slug"]),
    (["--name", "ok", "--env", "LD_PRELOAD"], ["--env 'LD_PRELOAD'", "refused"]),
    (["--name", "ok", "--env", "NODE_OPTIONS"], ["--env 'NODE_OPTIONS'", "refused"]),
    (["--name", "ok", "--env", "1BAD"], ["--env '1BAD'", "not an environment variable name"]),
    (["--name", "ok", "--header", "X-Key\r\nInjected: 1"], ["--header", "not an HTTP header name"]),
], ids=["name-newline", "name-300", "name-cyrillic", "env-ld-preload", "env-node-options", "env-shape", "header-crlf"])
def test_measure_flags_are_validated_before_use(flags, words, tmp_path):
    what = ["--url", "https://example.invalid/mcp"] if "--header" in flags else ["--command", "npx -y x"]
    one_error_line(cli("measure", *what, *flags, "--results", str(tmp_path / "r"), "--badges", str(tmp_path / "b")),
                   *words)
    assert not (tmp_path / "r").exists()


# --- verify ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,words", [
    ("fifo", ["not a regular file (a FIFO)"]),
    ("dev-zero", ["not a regular file (a character device)"]),
    ("directory", ["not a regular file (a directory)"]),
    ("sparse-1g", ["larger than 134217728 bytes"]),
    ("deep-json", ["cannot verify"]),
], ids=["fifo", "dev-zero", "directory", "sparse-1g", "deep-json"])
def test_verify_reads_bounded_regular_files_only(kind, words, tmp_path):
    path = tmp_path / "input.json"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would wait forever
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind == "directory":
        path = tmp_path
    elif kind == "sparse-1g":
        with open(path, "wb") as f:
            f.truncate(1 << 30)
    else:
        path.write_text("[" * 200_000 + "]" * 200_000)
    one_error_line(cli("verify", str(path)), *words)


class Dripping:
    """A local HTTP server that answers slowly: ``"body"`` sends its headers then one byte every 2 s;
    ``"headers"`` drips the headers themselves; ``"huge"`` announces a 1 TB body."""

    def __init__(self, mode: str):
        self.mode, self.sock = mode, socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                length = "1000000000000" if self.mode == "huge" else "1000"
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\n".encode()
                try:
                    if self.mode == "headers":
                        for byte in head:
                            conn.sendall(bytes([byte]))
                            if self.stop.wait(2):
                                return
                    conn.sendall(head)
                    while not self.stop.wait(2):
                        conn.sendall(b" ")
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


@pytest.mark.parametrize("mode,words", [
    ("body", ["no complete reply within 3 s"]),
    ("headers", ["no complete reply within 3 s"]),
    ("huge", ["larger than 134217728 bytes"]),
])
@pytest.mark.slow
def test_verify_fetches_within_one_overall_deadline(mode, words):
    server = Dripping(mode)
    try:
        done = cli("verify", "--timeout", "3", f"http://127.0.0.1:{server.port}/measurement.json")
    finally:
        server.close()
    one_error_line(done, *words)  # a byte every 2 s never trips a per-read timeout: the overall deadline ended it


# --- the Action's inputs --------------------------------------------------------------------------

@pytest.mark.parametrize("inputs,words", [
    ({"INPUT_BUDGET": "9" * 5000}, ["input 'budget'", "at most 15 digits"]),
    ({"INPUT_BUDGET": "\u0661\u0662"}, ["input 'budget'"]),
    ({"INPUT_TIMEOUT": "9" * 5000}, ["input 'timeout'"]),
    ({"INPUT_MAX-INCREASE": "9" * 5000, "INPUT_BASELINE": "b.json"}, ["input 'max-increase'"]),
    ({"INPUT_NAME": "bad\nname"}, ["input 'name'"]),
    ({"INPUT_NAME": "a" * 300}, ["input 'name'", "at most 64"]),
    ({"INPUT_ENV": "OK_KEY, LD_PRELOAD"}, ["input 'env'", "LD_PRELOAD", "refused"]),
    ({"INPUT_COMMAND": "npx -y x\x1b]0;title\x07"}, ["input 'command'", "U+001B"]),
    ({"INPUT_COMMAND": "npx " + "x" * 20_000}, ["input 'command'", "longer than 8192"]),
], ids=["budget-5000-digits", "budget-arabic-digits", "timeout-5000-digits", "max-increase-5000-digits",
        "name-newline", "name-300", "env-ld-preload", "command-escape", "command-20000"])
def test_action_inputs_are_bounded(inputs, words, tmp_path):
    env = {"PATH": os.environ["PATH"], "GITHUB_WORKSPACE": str(tmp_path), "INPUT_COMMAND": "npx -y x",
           "GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), **inputs}
    done = bounded_run([sys.executable, str(REPO / "entrypoint.py")], env=env)
    assert done.returncode == 1, (done.stdout[-1000:], done.stderr[-2000:])
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout[-2000:]
    for word in words:
        assert word in errors[0], (word, errors[0])
    outputs = (tmp_path / "out").read_text()
    status = outputs[outputs.index("status<<"):].split("\n")
    assert status[1] == "error", outputs


# --- shard manifests ------------------------------------------------------------------------------

@pytest.mark.parametrize("servers,words", [
    (["../../outside"], ['field "servers" item #1']),
    (["ok", "bad\n"], ['field "servers" item #2']),
    (["a" * 300], ['field "servers" item #1']),
    ([7], ['field "servers" item #1']),
], ids=["traversal", "newline", "300-chars", "not-a-string"])
def test_shard_manifests_name_slugs_only(servers, words, tmp_path):
    shard = tmp_path / "shard"
    (shard / "results").mkdir(parents=True)
    (shard / "shard.json").write_text(json.dumps({"date": "2026-11-30", "shard": "1/1", "servers": servers}))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "servers.yaml").write_text(ENTRY)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    one_error_line(cli("sweep", "--root", str(repo), "--merge", str(shard)), *words, trailer="nothing published")
