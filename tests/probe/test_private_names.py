"""A backend under a private network's own suffix (``postgres.svc``, ``db.lan``, ``api.corp``) fails to
resolve for every user outside that network, so on a machine without DNS too it is the server's own
failure; a public name that does not resolve stays the machine's."""

from __future__ import annotations

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target


pytestmark = pytest.mark.usefixtures("no_dns")


def _verdict(host: str) -> st.Verdict:
    tail = f"Error: getaddrinfo ENOTFOUND {host}\n"
    return st.classify(Target(name="private", command="python3 server.py"),
                       Capture("1.0.0", phase="initialize", stderr_tail=tail, exit_code=1,
                               failure=Failure("exited", "initialize", "the server exited before replying",
                                               exit_code=1)))


@pytest.mark.parametrize("host", ["postgres.svc", "db.lan", "api.corp", "nas.home", "redis.localdomain", "app.docker",
                                  "vault.service.consul", "my-db.intranet", "smtp.mail", "store.private",
                                  "db.default.svc.cluster.local", "router.home.arpa"])
def test_a_private_network_s_name_is_the_server_s(host):
    assert _verdict(host).status == st.STARTUP_FAILURE


@pytest.mark.parametrize("host", ["api.mcp-context-cost-no-such-host-5c1e.com", "svc.mcp-context-cost-no-such-5c1e.io",
                                  "lan.mcp-context-cost-no-such-5c1e.dev"])
def test_a_public_name_that_does_not_resolve_stays_the_machine_s(host):
    verdict = _verdict(host)
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict
