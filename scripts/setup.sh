#!/usr/bin/env bash
# Set up everything the project needs from its own files: a virtualenv with the pinned
# dependencies (constraints.txt), and the o200k_base tokenizer file (downloaded by tiktoken, or
# derived from the npm package `tiktoken` and accepted only if its SHA-256 matches tiktoken's pin).
# Needs: python3 (>= 3.11) with venv, node and npm on PATH. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]"
.venv/bin/python -m harness.core.tokenizer
