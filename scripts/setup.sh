#!/usr/bin/env bash
# Set up everything the project needs from its own files: a virtualenv with the pinned
# dependencies (constraints.txt), and the o200k_base tokenizer file (downloaded by tiktoken, or
# derived from the npm package `tiktoken` and accepted only if its SHA-256 matches tiktoken's pin).
# Needs: python3 (>= 3.11) with venv, node and npm on PATH. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

# System tools: bubblewrap (the sandbox isolation mode) and Chromium (the dashboard test).
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$missing" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "warning: missing$missing (install them with your package manager)" >&2
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]"
.venv/bin/python -m harness.core.tokenizer
