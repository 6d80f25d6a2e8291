"""What a person's own ``measure --command`` shows the sandbox: the file it names, never the folder
around it, never a home folder or an ancestor of one, never a secret path.

A fake home in a temporary folder holds the credential files a real one does beside the script
(``~/.ssh``, ``~/.aws``, ``~/.npmrc``, ``~/.netrc``, ``~/.git-credentials``, ``~/.config/gh``, a
project's ``.env`` and ``.git/config``). The server (``snoops_home.py``/``.js``: one file, so it runs
when only that file is shown) lists its own folder and every folder above it and tries the usual
credential files in each and in its home; whatever it sees lands in its tool description, and so in
the record. Each test checks the record, the CLI's output and what the server says it saw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.probe import sandbox
from tests.conftest import FIXTURE_SERVERS, REPO

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")

# path under the fake home -> a text that must never reach a record unless that path was shown
HOME_FILES = {
    ".ssh/id_rsa": "ssh-private-key-Zq81x",
    ".aws/credentials": "aws_secret_access_key=aws-secret-Kp02x",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm-token-Wm55x",
    ".netrc": "machine example.com password netrc-pass-Yy31x",
    ".git-credentials": "https://user:gitcred-Hh90x@github.com",
    ".config/gh/hosts.yml": "oauth_token: gh-token-Rt44x",
    "notes.txt": "private-notes-Pp66x",
    "proj/.env": "API_KEY=dotenv-value-Qa73x",
    "proj/.env.local": "API_KEY=dotenv-local-Uu19x",
    "proj/.git/config": "url = https://user:gitconfig-Vb11x@example.com/x.git",
    "proj/helper.py": "neighbour-module-Lk20x = 1",
    "proj/sub/.npmrc": "//r/:_authToken=nested-npm-Nn48x",
}
SECRET_NAMES = {".ssh", ".aws", ".npmrc", ".netrc", ".git-credentials", ".config", "notes.txt", ".env", ".env.local"}


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    for relative, text in HOME_FILES.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text + "\n")
    for where in ("server.py", "proj/server.py", "proj/__main__.py"):
        shutil.copy(FIXTURE_SERVERS / "snoops_home.py", home / where)
    shutil.copy(FIXTURE_SERVERS / "snoops_home.js", home / "server.js")
    (home / "bin").mkdir()
    os.symlink(home / "proj" / "server.py", home / "bin" / "linked.py")
    return home


def measure(home: Path, command: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, dict | None]:
    """``measure --command`` under the sandbox with ``HOME=home``: (the run, the record or None)."""
    out = home.parent / "out"
    environ = {k: v for k, v in os.environ.items() if k != sandbox.SHOWN_VARIABLE}
    environ.update(HOME=str(home), MCP_CONTEXT_COST_CACHE=str(home.parent / "cache"),
                   PYTHONPATH=os.pathsep.join([str(REPO), environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    done = subprocess.run([sys.executable, "-m", "harness.cli", "measure", "--command", command, "--name", "snoop",
                           "--isolation", "sandbox", "--single", "--timeout", "30", "--out", str(out)],
                          cwd=cwd or home.parent, env=environ, capture_output=True, text=True, timeout=180)
    path = out / "results" / "snoop" / "measurement.json"
    return done, (json.loads(path.read_text()) if path.exists() else None)


def seen_by(rec: dict) -> dict:
    assert rec["status"] == "measured", rec.get("stderrTail") or rec["notes"]
    tool = next(t for t in rec["rawToolsCapture"] if t["name"] == "snoop")
    return json.loads(tool["description"].removeprefix("SEEN "))


def assert_nothing_leaked(done: subprocess.CompletedProcess, rec: dict | None, shown: tuple[str, ...] = ()) -> None:
    """No home file's text in the record or the output, except those of ``shown`` paths."""
    said = done.stdout + done.stderr + json.dumps(rec)
    for relative, text in HOME_FILES.items():
        if relative not in shown:
            assert text not in said, f"{relative} reached the record or the output"


def names_seen(seen: dict, home: Path) -> set[str]:
    """Every name listed in the home folder or below it, where the server runs from."""
    listings = [seen["beside"], *(names for folder, names in seen["above"].items() if folder.startswith(str(home)))]
    return {name for listing in listings if isinstance(listing, list) for name in listing}


# --- a file: that file alone ----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("variant", ["home-root", "subfolder", "relative", "symlink", "interpreter-flag", "node"])
def test_a_named_script_is_shown_alone(variant, home):
    command, cwd, shown_as = {
        "home-root": (f"python3 {home}/server.py", None, "~/server.py"),
        "subfolder": (f"python3 {home}/proj/server.py", None, "~/proj/server.py"),
        "relative": ("python3 server.py", home / "proj", "~/proj/server.py"),
        "symlink": (f"python3 {home}/bin/linked.py", None, "~/proj/server.py"),
        "interpreter-flag": (f"python3 -u {home}/proj/server.py", None, "~/proj/server.py"),
        "node": (f"node {home}/server.js", None, "~/server.js"),
    }[variant]
    done, rec = measure(home, command, cwd)
    assert rec is not None, done.stderr
    seen = seen_by(rec)
    assert_nothing_leaked(done, rec)
    assert seen["beside"] == [Path(seen["file"]).name], seen["beside"]  # not one neighbour
    on_the_way = set(Path(seen["file"]).parts)  # the folders leading to the file, made to hold it
    assert names_seen(seen, home) <= on_the_way, seen
    assert all(str(v).startswith("error:") for v in seen["tried"].values()), seen["tried"]
    assert shown_as in rec["shownHostPaths"], rec["shownHostPaths"]
    assert not any(p == "~" or p.startswith("~/.") or str(home) in p for p in rec["shownHostPaths"])
    if variant == "relative":
        assert seen["file"] == "/home/mcp/work/server.py"
    elif variant == "symlink":
        assert seen["file"] == f"{home}/bin/linked.py"  # the path named, holding only the file linked to


@pytest.mark.slow
def test_a_named_folder_is_shown_with_its_secret_paths_masked(home):
    os.symlink(home / ".ssh", home / "proj" / ".ssh")  # a link out of the folder leads nowhere inside
    os.symlink(home / "notes.txt", home / "proj" / "notes.txt")
    done, rec = measure(home, f"python3 {home}/proj", None)
    assert rec is not None, done.stderr
    seen = seen_by(rec)
    assert_nothing_leaked(done, rec, shown=("proj/helper.py",))  # the person named the folder
    assert "helper.py" in seen["beside"] and ".env" in seen["beside"]  # there, but masked (/dev/null, nodev):
    tried = seen["tried"]
    assert tried[f"{home}/proj/.env"] == tried[f"{home}/proj/.git/config"] == "error: Permission denied"
    assert seen["looked"] == {}
    assert tried[f"{home}/.ssh/id_rsa"].startswith("error:") and tried[f"{home}/notes.txt"].startswith("error:")
    assert tried[f"{home}/proj/.ssh/id_rsa"].startswith("error:")
    assert tried[f"{home}/proj/notes.txt"].startswith("error:")
    assert seen["above"][str(home)] == ["proj"]  # nothing else of the home
    assert "~/proj" in rec["shownHostPaths"] and "~" not in rec["shownHostPaths"]



LINKED_SECRETS = {"settings/prod.env": "API_KEY=linked-dotenv-Jd62x", "settings/npmrc": "//r/:_authToken=linked-npm-Ew27x",
                  "settings/gh/hosts.yml": "oauth_token: linked-gh-Mc38x"}


def _secret_names_linked_inside(folder: Path) -> None:
    """``folder``'s ``.env``, ``.npmrc`` and ``.config/gh`` as links to plainly named files and a folder in it (a
    dotfiles layout, a deploy's ``.env -> settings/prod.env``)."""
    for relative, text in LINKED_SECRETS.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text + "\n")
    (folder / ".env").unlink(missing_ok=True)
    os.symlink("settings/prod.env", folder / ".env")
    os.symlink("settings/npmrc", folder / ".npmrc")
    (folder / ".config").mkdir(exist_ok=True)
    os.symlink(folder / "settings" / "gh", folder / ".config" / "gh")
    (folder / "settings" / "gh" / "db.cnf").write_text("password=x\n")
    os.symlink("settings/gh/db.cnf", folder / ".my.cnf")  # inside a folder a link masks too


@pytest.mark.slow
def test_a_secret_path_that_is_a_link_inside_the_shown_folder_stays_masked(home):
    _secret_names_linked_inside(home / "proj")
    done, rec = measure(home, f"python3 {home}/proj", None)
    assert rec is not None, done.stderr
    tried = seen_by(rec)["tried"]
    for name in (".env", ".npmrc", ".config/gh/hosts.yml"):
        assert tried[f"{home}/proj/{name}"].startswith("error:"), (name, tried[f"{home}/proj/{name}"])
    said = done.stdout + done.stderr + json.dumps(rec)
    assert not [text for text in LINKED_SECRETS.values() if text in said]


def test_a_secret_named_link_masks_what_it_leads_to_in_the_folder(tmp_path):
    folder = tmp_path / "proj"
    _secret_names_linked_inside(folder)
    os.symlink("/etc/hostname", folder / ".netrc")  # leads out of the folder: the sandbox shows /etc anyway
    os.symlink("settings/missing", folder / ".pgpass")
    masks = sandbox.folder_masks(str(folder))
    masked = {masks[i + 2] if masks[i] == "--ro-bind" else masks[i + 1] for i in range(len(masks))
              if masks[i] in ("--ro-bind", "--tmpfs")}
    assert masked == {str(folder / p) for p in ("settings/prod.env", "settings/npmrc", "settings/gh")}

def test_a_secret_named_link_masks_what_it_leads_to_in_another_shown_folder(tmp_path):
    app, settings = tmp_path / "app", tmp_path / "settings"
    app.mkdir()
    settings.mkdir()
    (settings / "prod.env").write_text("API_KEY=x\n")
    os.symlink(settings / "prod.env", app / ".env")  # the sandbox shows settings too: the link's name says a secret
    argv = sandbox.bwrap_argv(["true"], tmp_path / "work", tmp_path / "cache", 7, shown=(str(app), str(settings)))
    assert any(argv[i:i + 3] == ["--ro-bind", "/dev/null", str(settings / "prod.env")] for i in range(len(argv)))


def test_a_link_on_the_way_to_a_secret_path_masks_it_where_it_leads(tmp_path):
    """``.config -> dotfiles/config`` makes ``.config/gh`` the plainly named ``dotfiles/config/gh``."""
    (tmp_path / "dotfiles" / "config" / "gh").mkdir(parents=True)
    (tmp_path / "dotfiles" / "config" / "gh" / "hosts.yml").write_text("oauth_token: x\n")
    os.symlink("dotfiles/config", tmp_path / ".config")
    (tmp_path / "gitdir").mkdir()
    (tmp_path / "gitdir" / "config").write_text("url = https://user:x@example.com\n")
    os.symlink("gitdir", tmp_path / ".GIT")
    (tmp_path / "local" / "share" / "keyrings").mkdir(parents=True)
    (tmp_path / ".local").mkdir()
    os.symlink("../local/share", tmp_path / ".local" / "share")
    masks = sandbox.folder_masks(str(tmp_path))
    masked = {masks[i + 2] if masks[i] == "--ro-bind" else masks[i + 1] for i in range(len(masks))
              if masks[i] in ("--ro-bind", "--tmpfs")}
    assert masked == {str(tmp_path / p) for p in ("dotfiles/config/gh", "gitdir/config", "local/share/keyrings")}


def test_many_secret_named_links_are_masked_in_time(tmp_path):
    for i in range(9_000):  # within MAX_SEARCHED: each leads to a file of its own
        (tmp_path / f"t{i}").write_text("x")
        os.symlink(f"t{i}", tmp_path / f".env.{i}")
    started = time.monotonic()
    masks = sandbox.folder_masks(str(tmp_path))
    assert time.monotonic() - started < 15  # comparing every target with every other took over a minute
    assert masks.count("/dev/null") == 9_000


# --- what is never shown --------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["the-home", "above-the-home", "root", "secret-file", "secret-folder",
                                     "secret-option-value", "through-a-link", "link-to-the-harness-proc",
                                     "link-to-a-masked-host-file", "odd-case", "ai-client-credentials"])
def test_a_home_an_ancestor_or_a_secret_path_is_refused(variant, home):
    os.symlink(home / ".aws" / "credentials", home / "innocent.txt")
    os.symlink("/proc/self/environ", home / "environ.txt")  # the harness's own, resolved by the harness
    os.symlink("/etc/shadow", home / "users.txt")
    (home / ".SSH").mkdir()
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    named, why = {
        "the-home": (str(home), "is a home folder"),
        "above-the-home": (str(home.parent), "holds the home folder"),
        "root": ("/", "holds the home folder"),
        "secret-file": (f"{home}/.aws/credentials", "secret path (.aws)"),
        "secret-folder": (f"{home}/.ssh", "secret path (.ssh)"),
        "secret-option-value": (f"--env-file={home}/proj/.env", "secret path (.env)"),
        "through-a-link": (f"{home}/innocent.txt", "secret path (.aws)"),
        "link-to-the-harness-proc": (f"{home}/environ.txt", "lies in /proc, /dev or /sys"),
        "link-to-a-masked-host-file": (f"{home}/users.txt", "/etc/shadow, which is a host secret path"),
        "odd-case": (f"{home}/.SSH", "secret path (.SSH)"),
        "ai-client-credentials": (f"--credentials={home}/.claude/.credentials.json", "(.claude/.credentials.json)"),
    }[variant]
    if variant == "link-to-a-masked-host-file" and not os.path.isfile("/etc/shadow"):
        pytest.skip("no /etc/shadow here")
    done, rec = measure(home, f"python3 {home}/server.py {named}")
    assert done.returncode == 2 and rec is None, done.stdout + done.stderr
    assert why in done.stderr and "never shown to the sandbox" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert_nothing_leaked(done, rec)


@pytest.mark.slow
def test_what_the_sandbox_keeps_empty_is_not_shown_from_the_host(home):
    done, rec = measure(home, f"python3 {home}/server.py --look /tmp --look {home.parent}/out")
    seen = seen_by(rec)
    assert seen["looked"]["/tmp"] != sorted(os.listdir("/tmp"))  # the sandbox's own /tmp
    assert rec["shownHostPaths"].count("~/server.py") == 1
    assert_nothing_leaked(done, rec)


# --- the rules themselves -------------------------------------------------------------------------

def test_secret_paths_are_found_wherever_they_lie(tmp_path):
    for path, part in [("/a/.ssh", ".ssh"), ("/a/.ssh/id_ed25519", ".ssh"), ("/p/.env.production", ".env.production"),
                       ("/p/.git/config", ".git/config"), ("/h/.config/gh/hosts.yml", ".config/gh"),
                       ("/k/server.pem", "server.pem"), ("/h/.docker/config.json", ".docker")]:
        assert sandbox.secret_part(path) == part, path
    for path, part in [("/a/.SSH", ".SSH"), ("/h/.Npmrc", ".Npmrc"), ("/p/credentials.json", "credentials.json"),
                       ("/p/client_secret_123.json", "client_secret_123.json"), ("/p/token.json", "token.json"),
                       ("/h/.claude/.credentials.json", ".claude/.credentials.json"), ("/k/id_dsa", "id_dsa"),
                       ("/h/.m2/settings.xml", ".m2/settings.xml"), ("/p/cert.p12", "cert.p12"),
                       ("/p/terraform.tfstate", "terraform.tfstate"), ("/h/.codex/auth.json", ".codex/auth.json")]:
        assert sandbox.secret_part(path) == part, path
    for path in ("/a/ssh", "/p/.environment", "/p/git/config", "/h/.config/ghost", "/k/pem", "/p/env",
                 "/p/credentials.py", "/h/.claude/settings.json", "/p/tokens.json"):
        assert sandbox.secret_part(path) is None, path
    folder = tmp_path / "proj"
    for relative in (".env", "sub/.npmrc", "sub/.aws/credentials", "node_modules/x/.env", "ok.py", ".git/config"):
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text("x")
    os.symlink("/etc/hostname", folder / ".netrc")
    masks = sandbox.folder_masks(str(folder))
    masked = {masks[i + 2] if masks[i] == "--ro-bind" else masks[i + 1] for i in range(len(masks))
              if masks[i] in ("--ro-bind", "--tmpfs")}
    assert masked == {str(folder / p) for p in (".env", "sub/.npmrc", "sub/.aws", ".git/config")}


def test_a_folder_too_large_to_search_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "MAX_SEARCHED", 50)
    for i in range(60):
        (tmp_path / f"f{i}").write_text("x")
    with pytest.raises(ValueError, match="more than 50 entries"):
        sandbox.folder_masks(str(tmp_path))


def test_which_arguments_name_what(home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(sandbox.SHOWN_VARIABLE, raising=False)
    (home / "proj" / "data.db").write_text("rows")
    (home / "proj" / "run").write_text("#!/bin/sh\n")
    argv = ["./run", "-u", "server.py", "--db=/proc/1/status", f"--data={home}/proj/data.db", "/usr/bin/env", "/tmp",
            "../notes.txt", "~/server.py", str(home / "missing.py"), "/dev/null", "plain-word", str(home / "proj" / "sub")]
    folders, files = sandbox.named_paths(argv, home / "proj")
    assert folders == (str(home / "proj" / "sub"),)
    assert files == ((str(home / "proj" / "run"), "/home/mcp/work/run"),
                     (str(home / "proj" / "server.py"), "/home/mcp/work/server.py"),
                     (str(home / "proj" / "data.db"), str(home / "proj" / "data.db")))
    assert sandbox.shown_host_paths(folders, files)[-4:] == ["~/proj/sub", "~/proj/run", "~/proj/server.py",
                                                              "~/proj/data.db"]


@pytest.mark.parametrize("target", ["/proc/self/environ", "/proc/self/fd", "/proc/self/root/etc/shadow",
                                    "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private", "/dev/shm"])
def test_a_link_never_shows_what_the_sandbox_masks_or_has_of_its_own(target, home):
    """A link the person names leads to the harness's own /proc entries or a host secret the sandbox
    masks where it lies: shown at the link's path, it would be readable. Refused instead."""
    if not os.path.exists(target):
        pytest.skip(f"{target} does not exist here")
    os.symlink(target, home / "proj" / "link")
    for named in (str(home / "proj" / "link"), "link", f"--file={home}/proj/link"):
        if named == "link" and os.path.isdir(target):  # a relative folder is never shown at all
            assert sandbox.named_paths(["python3", named], home / "proj") == ((), ())
            continue
        with pytest.raises(ValueError, match="never shown to the sandbox"):
            sandbox.named_paths(["python3", str(home / "server.py"), named], home / "proj")


@pytest.mark.parametrize("named", [".aws", ".config/gh", ".ssh"])
def test_a_secret_path_is_refused_when_it_is_a_link_to_a_plain_folder(named, home):
    """``~/.aws`` kept elsewhere (a dotfiles folder, another disk): the folder named is the secret one,
    whatever its real path is called."""
    store = home.parent / "dotfiles" / "store"
    (store / "sub").mkdir(parents=True)
    (home / "proj" / named).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(store, home / "proj" / named)
    for argv in (["python3", str(home / "server.py"), f"{home}/proj/{named}"],
                 ["python3", str(home / "server.py"), f"--dir={home}/proj/{named}/sub"]):
        with pytest.raises(ValueError, match=r"secret path .*never shown to the sandbox"):
            sandbox.named_paths(argv, home / "proj")
    with pytest.raises(ValueError, match="secret path"):
        sandbox.checked_dirs([f"{home}/proj/{named}"])


@pytest.mark.parametrize("variant", ["the-home", "root", "missing", "link-to-proc", "secret-folder"])
def test_a_shown_dirs_setting_that_cannot_be_shown_is_refused_before_any_launch(variant, home):
    """The person's own setting naming a home, ``/``, a missing folder, a link into ``/proc`` or a
    secret folder: one line, exit 2, no record (not one startup failure per launch of the run)."""
    os.symlink("/proc/self/fd", home / "fds")
    shown = {"the-home": str(home), "root": "/", "missing": str(home / "nowhere"), "link-to-proc": str(home / "fds"),
             "secret-folder": str(home / ".ssh")}[variant]
    environ = {**os.environ, sandbox.SHOWN_VARIABLE: f"{FIXTURE_SERVERS}{os.pathsep}{shown}", "HOME": str(home),
               "MCP_CONTEXT_COST_CACHE": str(home.parent / "cache"),
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    out = home.parent / "out"
    done = subprocess.run([sys.executable, "-m", "harness.cli", "measure", "--command", f"python3 {home}/server.py",
                           "--name", "snoop", "--isolation", "sandbox", "--single", "--out", str(out)],
                          cwd=home.parent, env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {sandbox.SHOWN_VARIABLE}: {shown}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("prefix", ["the-home", "above-the-home", "a-secret-folder"])
def test_the_harness_pythons_prefix_is_never_a_home(prefix, home, monkeypatch):
    """A Python built with ``--prefix=$HOME`` (or installed above it, or in a secret folder) has that
    folder as its prefix: the sandbox shows its Python's prefix, but never such a folder."""
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh" / "bin").mkdir()
    folder = {"the-home": home, "above-the-home": home.parent, "a-secret-folder": home / ".ssh"}[prefix]
    monkeypatch.setattr(sys, "prefix", str(folder))
    monkeypatch.setattr(sys, "base_prefix", str(folder))
    monkeypatch.setattr(sys, "executable", str(folder / "bin" / "python3"))
    roots = sandbox.visible_roots()
    assert not any(str(home).startswith(r) or r.startswith(str(home)) for r in roots if r not in sandbox.SYSTEM_DIRS), roots
    assert all(not p.startswith("~") and str(home) not in p for p in sandbox.shown_host_paths((), ())), roots


def test_a_pythons_prefix_reached_through_a_link_in_a_shown_root_is_shown_where_it_lies(tmp_path, monkeypatch):
    """A venv at ``/opt/venv`` that is a link to another disk: the sandbox shows ``/opt`` with the link in it, so
    the folder the link leads to must be shown too, or the harness's Python (the resolver's interpreter) is
    missing in every sandboxed launch."""
    (tmp_path / "system").mkdir()
    (tmp_path / "disk" / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "disk" / "venv" / "bin" / "python3").symlink_to(os.path.realpath(sys.executable))
    (tmp_path / "system" / "venv").symlink_to(tmp_path / "disk" / "venv", target_is_directory=True)
    monkeypatch.setattr(sandbox, "SYSTEM_DIRS", (str(tmp_path / "system"), *sandbox.SYSTEM_DIRS))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "system" / "venv"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "system" / "venv" / "bin" / "python3"))
    assert str(tmp_path / "disk" / "venv") in sandbox.visible_roots()


def test_a_named_path_through_a_link_in_a_shown_root_is_shown_where_it_leads(tmp_path, monkeypatch):
    """``node /opt/tools/server.js`` where ``/opt/tools`` is a link to another disk: ``/opt`` is shown with the
    link in it, so the file or folder it leads to is shown at its real path, or the server cannot start."""
    (tmp_path / "system").mkdir()
    (tmp_path / "disk" / "tools").mkdir(parents=True)
    (tmp_path / "disk" / "tools" / "server.js").write_text("//")
    (tmp_path / "system" / "tools").symlink_to(tmp_path / "disk" / "tools", target_is_directory=True)
    (tmp_path / "system" / "plain.js").write_text("//")
    monkeypatch.setattr(sandbox, "SYSTEM_DIRS", (str(tmp_path / "system"), *sandbox.SYSTEM_DIRS))
    linked = tmp_path / "system" / "tools"
    real = tmp_path / "disk" / "tools"
    assert sandbox.named_paths(["node", str(linked / "server.js")], tmp_path) == \
        ((), ((str(real / "server.js"), str(real / "server.js")),))
    assert sandbox.named_paths(["node", "x.js", str(linked)], tmp_path) == ((str(real),), ())
    assert sandbox.named_paths(["node", str(tmp_path / "system" / "plain.js")], tmp_path) == ((), ())  # shown already
