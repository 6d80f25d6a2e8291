"""``harness.probe.redact.Secrets`` and ``harness.probe.server_env``'s secret values: which values are secrets, and every spelling of one that
is found — encoded, escaped, halved, cut by a truncation."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.parse

import pytest

from harness.probe import server_env, redact
from harness.probe.redact import MASK, Secrets
from harness.probe.remote import header_env_name
from harness.probe.target import Target
from tests.hostile import PASSWORD, SENTINEL, forbidden_forms

S = Secrets([SENTINEL])
DATA = SENTINEL.encode()


def spellings(secret: str) -> dict[str, str]:
    data = secret.encode()
    return {
        "exact": secret,
        "base64": base64.b64encode(data).decode(),
        "base64-unpadded": base64.b64encode(data).decode().rstrip("="),
        "base64url": base64.urlsafe_b64encode(data).decode(),
        "base64url-unpadded": base64.urlsafe_b64encode(data).decode().rstrip("="),
        "basic-user:secret": base64.b64encode(b"user:" + data).decode(),
        "base64-shift-1": base64.b64encode(b"a" + data + b"z").decode(),
        "base64-shift-2-url": base64.urlsafe_b64encode(b"ab" + data).decode(),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
        "percent-every-byte": "".join(f"%{b:02x}" for b in data),
        "percent-every-byte-upper": "".join(f"%{b:02X}" for b in data),
        "percent-quote": urllib.parse.quote(secret, safe=""),
        "percent-mixed": "".join(f"%{ord(c):02X}" if i % 3 == 0 else c for i, c in enumerate(secret)),
        "form-plus": urllib.parse.quote_plus(secret),
        "json-every-char": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json-dumps-in-json": json.dumps(json.dumps({"k": secret})),
        "json-slash-escaped": secret.replace("-", "\\u002d"),
        "first-half": secret[: len(secret) // 2],
        "second-half": secret[len(secret) // 2:],
        "run-of-8": secret[11:19],
        "hex-half": data.hex()[: len(data)],
        "base64-half": base64.b64encode(data).decode()[:20],
        "percent-half": "".join(f"%{b:02x}" for b in data[:10]),
    }


@pytest.mark.parametrize("text", spellings(SENTINEL).values(), ids=spellings(SENTINEL).keys())
def test_every_spelling_of_a_secret_is_redacted(text):
    for wrapped in (text, f"key={text}; next", f'{{"leak": "{text}"}}'):
        out = S.text(wrapped)
        assert MASK in out
        for form in forbidden_forms(SENTINEL):
            assert form not in out, (form, out)
        assert S.text(out) == out  # idempotent: the final record scrub changes nothing


def test_surrounding_text_is_kept_exactly():
    assert S.text(f"a {SENTINEL} b") == f"a {MASK} b"
    pct = "".join(f"%{b:02x}" for b in DATA)
    assert S.text(f"url?k={pct}&x=1") == f"url?k={MASK}&x=1"
    assert S.text(f"[{SENTINEL}{SENTINEL}]") == f"[{MASK}]"  # adjacent occurrences make one mask
    assert S.text("nothing secret here, not even sk-live") == "nothing secret here, not even sk-live"


def test_a_run_shorter_than_eight_is_not_a_secret_but_a_short_secret_is_whole():
    assert S.text(SENTINEL[10:17]) == SENTINEL[10:17]  # 7 characters: ordinary text may hold them
    short = Secrets(["k3y!"])
    assert short.text("the k3y! and k3y") == f"the {MASK} and k3y"
    assert short.text(base64.b64encode(b"k3y!").decode()) == MASK
    assert Secrets(["abc"]).text("abc") == "abc"  # below MIN_SECRET_LENGTH: never a credential
    assert Secrets(["mcp-context-cost-dummy-key"]).values == ()  # the harness's own placeholder


def test_json_values_keys_and_the_changed_flag():
    value = {"a": [SENTINEL, 1, None, {"k" + SENTINEL: True}], "b": "plain"}
    clean, changed = S.json(value)
    assert changed and clean == {"a": [MASK, 1, None, {"k" + MASK: True}], "b": "plain"}
    assert S.json({"b": "plain"}) == ({"b": "plain"}, False)
    assert Secrets().json(value) == (value, False)


@pytest.mark.parametrize("offset", range(0, len(SENTINEL) + 1, 3))
def test_cut_redacts_before_it_truncates(offset):
    """Wherever a truncation falls inside the secret, no piece of it survives (truncating
    first would leave the head of a secret cut in two)."""
    text = "x" * (100 - offset) + SENTINEL + " tail"
    head = S.cut(text, 100)
    assert head == ("x" * (100 - offset) + MASK + " tail")[:100]
    tail_text = "start " + SENTINEL + "y" * (200 - len(SENTINEL) + offset)
    tail = S.cut_tail(tail_text, 200)
    assert len(tail.encode()) <= 200
    assert tail == ("start " + MASK + "y" * (200 - len(SENTINEL) + offset))[-200:]


def test_long_text_is_searched_across_its_chunks():
    for position in (redact._CHUNK - 20, redact._CHUNK - redact._OVERLAP - 5, 3 * redact._CHUNK):
        text = "a" * position + SENTINEL + "b" * 50
        out = S.text(text)
        assert out == "a" * position + MASK + "b" * 50


def test_the_current_set_is_per_task():
    async def measure(secrets: Secrets, seen: list):
        with redact.activated(secrets):
            await asyncio.sleep(0.01)
            seen.append(redact.cut(f"{SENTINEL} {PASSWORD}", 200))

    async def both():
        seen: list = []
        await asyncio.gather(measure(S, seen), measure(Secrets([PASSWORD]), seen))
        return sorted(seen)

    assert asyncio.run(both()) == sorted([f"{MASK} {PASSWORD}", f"{SENTINEL} {MASK}"])
    assert redact.cut(SENTINEL, 200) == SENTINEL  # outside a measurement nothing is current


# --- which values are secrets -------------------------------------------------------------------

PROXY = f"http://proxyuser:{PASSWORD}@proxy.internal:3128"
INDEX = f"https://__token__:{urllib.parse.quote(PASSWORD + '/+', safe='')}@pypi.internal/simple"


@pytest.mark.parametrize("name", ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "Https_Proxy",
                                  "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX",
                                  "npm_config_registry", "NPM_CONFIG_REGISTRY"])
def test_credentials_in_proxy_and_index_urls_are_secrets(name):
    environ = {name: PROXY if "PROXY" in name.upper() else INDEX, "PATH": "/usr/bin"}
    secrets = Secrets.for_target(Target(name="t", command="node x.js"), environ)
    assert PASSWORD in secrets.values or PASSWORD + "/+" in secrets.values
    shown = secrets.text(f"i was handed {environ[name]} and {PASSWORD}")
    assert PASSWORD not in shown and urllib.parse.quote(PASSWORD) not in shown
    assert "proxy.internal" in shown or "pypi.internal" in shown  # the host is not a secret


def test_declared_values_headers_and_the_launch_command():
    environ = {"MY_KEY": SENTINEL, header_env_name("Authorization"): f"Bearer {PASSWORD}",
               header_env_name("X-Api-Key"): "xk-" + PASSWORD[::-1], "UNDECLARED": "ud-" + SENTINEL[::-1]}
    target = Target(name="t", url="https://h/mcp?api_key=qk-7Hd92Ks0Lq", env=("MY_KEY",),
                    headers=("Authorization", "X-Api-Key"))
    values = Secrets.for_target(target, environ).values
    assert {SENTINEL, PASSWORD, "xk-" + PASSWORD[::-1], "qk-7Hd92Ks0Lq"} <= set(values)
    assert f"Bearer {PASSWORD}" not in values  # the scheme word alone is public: "Bearer t…" is not masked
    assert "ud-" + SENTINEL[::-1] not in values  # not handed to the server
    command = (f"npx srv --api-key {SENTINEL} --token={PASSWORD} API_KEY=ak-4Fj82Lp0Qz "
               "--header 'Authorization: Bearer hb-93Kd72Lq0P' --key $KEY --auth-mode restricted --token-limit 4096")
    values = Secrets.for_target(Target(name="t", command=command), {}).values
    assert {SENTINEL, PASSWORD, "ak-4Fj82Lp0Qz", "hb-93Kd72Lq0P"} <= set(values)
    assert not {"$KEY", "restricted", "4096"} & set(values)  # references and settings are not secrets


def test_handed_builds_a_set_from_a_client_config():
    """The interface ``audit`` uses: a client config's env, headers, args and url."""
    secrets = Secrets.handed(env={"API_KEY": SENTINEL, "REGION": "eu-west-1"},
                             headers={"Authorization": "Basic " + base64.b64encode(f"u:{PASSWORD}".encode()).decode()},
                             argv=["--db", f"postgres://app:{PASSWORD}@db/prod"], url=None)
    assert SENTINEL in secrets.values and PASSWORD in secrets.values and "eu-west-1" in secrets.values
    assert repr(secrets) == f"<Secrets: {len(secrets.values)} value(s)>"  # never the values


def test_host_secrets_include_withheld_package_manager_credentials():
    host = {"npm_config__authToken": "npm_" + SENTINEL, "UV_INDEX_CORP_PASSWORD": PASSWORD,
            "UV_INDEX_CORP_USERNAME": "ci", "HOME": "/home/x"}
    assert {"npm_" + SENTINEL, PASSWORD} <= set(server_env.host_secrets(host))
    assert "npm_config__authToken" not in server_env.child_env((), host)  # withheld from the child
