"""The o200k ranks parsed from the verified rank file count odd texts exactly as node's tiktoken does (the npm
package the harness pins, its integrity checked): the parse may not shift, drop or merge a single rank."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import tarfile

import pytest

from harness.core import tokenizer as tk

pytestmark = pytest.mark.slow  # the pinned npm package fetched, and node started

ODD = ["", " ", "\r\n", "a\r\nb", "\t\t\n\n  \n", " " * 5000 + "x", "<|endoftext|>", "<|endoftext|><|im_start|>",
       "\u00a0\u2028\u2029\u0085", "e\u0301\u0301\u0301", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
       "1234567890" * 50, "'s'S'll'LL're", "\ufeffBOM", "\u0000\u0001\u007f", "ǅǈǋ", "ﬁﬂ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
       "日本語のテキストと한국어", "مرحبا بالعالم", "a" * 3000, "=" * 3000, "YQ== 0\nYg== 1",
       json.dumps({"name": "t", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})]

_NODE = r"""
const enc = require(process.argv[1]).get_encoding("o200k_base");
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => enc.encode(t, [], []).length)));
"""


@pytest.fixture(scope="module")
def node_counts(tmp_path_factory):
    node = shutil.which("node")
    assert node is not None, "node is the oracle"
    tarball, _ = tk._fetch_npm_tarball()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    assert integrity == tk.NPM_INTEGRITY
    root = tmp_path_factory.mktemp("tiktoken-npm")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        tar.extractall(root, filter="data")
    done = subprocess.run([node, "-e", _NODE, str(root / "package")], input=json.dumps(ODD), capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_verified_parse_counts_as_nodes_tiktoken(node_counts):
    url, expected = tk.pinned()
    tk.provision()
    data = tk.cache_path().read_bytes() if tk.cache_path().exists() else tk.derive_from_npm(expected)[0]
    enc = tk._load_verified(data, url, expected)
    assert [len(enc.encode_ordinary(text)) for text in ODD] == node_counts
    assert [tk.count(text) for text in ODD] == node_counts
