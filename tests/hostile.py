"""What the hostile-input tests assert, shared by the probe, CLI, sweep and Action suites.

* :func:`forbidden_forms` — the spellings of a secret that must appear nowhere: the value, its
  halves, hex (both cases), base64 at each byte alignment (standard and url-safe), every byte
  percent-encoded, every character as a JSON ``\\uXXXX`` escape. Computed here independently of
  ``harness.probe.redact`` (by encoding the secret behind 0, 1 and 2 filler bytes).
* :func:`assert_secret_absent` — none of them in any text, in any file under a folder (every file,
  byte for byte), or in ``git log -p --all`` of a repository.
* :func:`assert_safe_output` — printed text holds no raw control, bidi or format character and no
  line the GitHub runner would read as a workflow command, other than the harness's own
  annotations and stop-commands fences.
"""

from __future__ import annotations

import base64
import re
import subprocess
from pathlib import Path

# Long, random-looking, sharing no run of 8 characters with any env var name or ordinary word.
SENTINEL = "sk-live-Q7v9Zr2XwK4pN8dT1yB6mH3cJ5fL0gA"
# A second value for credentials inside URLs (proxy and index settings) and launch commands.
PASSWORD = "pw-9Xq2Lr7Vt4Ns8Mk3Hj6Bd1Fz5Cy0Wg"
MARKER = "pwned"  # every string of tests/fixtures/servers/hostile_text.py carries it

# Raw characters that must never reach a terminal, a CI log or a published file (LF and TAB aside,
# which the harness itself uses to lay out lines and files).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
                    "\u2066-\u206f\ud800-\udfff\ufeff\U000e0000-\U000e007f]")
# The annotation titles and fences the harness writes itself.
OWN_COMMAND = re.compile(r"^::(?:(?:error|warning|notice) title=[A-Za-z0-9 %_-]*::|stop-commands::[0-9a-f]{32}$"
                         r"|[0-9a-f]{32}::$)")


def forbidden_forms(secret: str) -> list[str]:
    data = secret.encode("utf-8")
    half = len(secret) // 2
    forms = {secret, secret[:half], secret[half:], data.hex(), data.hex().upper(),
             "".join("%%%02x" % b for b in data), "".join("%%%02X" % b for b in data),
             "".join("\\u%04x" % ord(c) for c in secret)}
    for filler in (b"", b"x", b"xy"):
        encoded = base64.b64encode(filler + data).decode()
        # Drop the characters that mix in filler bits at the start and whatever follows at the end.
        middle = encoded[(len(filler) * 8 + 5) // 6: (len(filler) + len(data)) * 8 // 6]
        forms |= {middle, middle.replace("+", "-").replace("/", "_")}
    return sorted(forms)


def _files(root: Path) -> list[Path]:
    return [p for p in Path(root).rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts]


def assert_secret_absent(secret: str, *, texts: tuple[str, ...] = (), roots: tuple[Path, ...] = (),
                         repos: tuple[Path, ...] = ()) -> int:
    """Fail naming where any forbidden form of ``secret`` was found; return how many places
    (texts, files, repositories) were read."""
    forms = forbidden_forms(secret)
    places = [(f"text {i}", text.encode("utf-8", "surrogatepass")) for i, text in enumerate(texts)]
    places += [(str(path), path.read_bytes()) for root in roots for path in _files(root)]
    for repo in repos:
        log = subprocess.run(["git", "log", "-p", "--all", "--format=%H%n%B"], cwd=repo, capture_output=True,
                             check=True).stdout
        places.append((f"git log -p --all of {repo}", log))
    for where, data in places:
        for form in forms:
            assert form.encode() not in data, f"{form!r} (a form of the secret) found in {where}"
    return len(places)


def assert_safe_output(text: str, where: str = "output") -> None:
    """No raw unsafe character and no workflow command from untrusted text in ``text``."""
    found = UNSAFE.search(text)
    assert found is None, f"raw {found.group(0)!r} in {where}: {text[max(0, found.start() - 80):found.end() + 80]!r}"
    assert "##[" not in text, f"a legacy workflow command (##[) in {where}"
    for line in text.split("\n"):
        body = line.lstrip()
        if body.startswith("::"):
            assert OWN_COMMAND.match(body) and MARKER not in body.split("::")[1], f"workflow command in {where}: {line!r}"


def assert_file_safe(path: Path) -> None:
    """A written file: valid UTF-8 with no raw unsafe character."""
    text = Path(path).read_bytes().decode("utf-8")
    found = UNSAFE.search(text)
    assert found is None, f"raw {found.group(0)!r} in {path}: {text[max(0, found.start() - 80):found.end() + 80]!r}"
