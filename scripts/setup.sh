#!/usr/bin/env bash
# Set up everything the project needs from its own files: a virtualenv with the pinned
# dependencies (constraints.txt), and the o200k_base tokenizer file (downloaded by tiktoken, or
# derived from the npm package `tiktoken` and accepted only if its SHA-256 matches tiktoken's pin).
# Needs: python3 (>= 3.11) with venv, node and npm on PATH. Idempotent; pip runs only when
# pyproject.toml, constraints.txt, the Python or the checkout changed since its last success, and never
# through a .venv linked from another checkout.
#
# Prints one line per step ("setup: <step>: <result>"), says before a slow step that it is slow, and
# keeps pip's own output in .venv/setup-pip.log (printed only when pip fails).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf 'setup: %s: ' "$1"; }
started=$SECONDS
took() { echo "$1 ($((SECONDS - started)) s)"; started=$SECONDS; }

# System tools: bubblewrap (the sandbox isolation mode) and Chromium (the dashboard test).
step "system tools (bubblewrap, chromium)"
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ "${#missing[@]}" -eq 0 ]; then
  took "present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  printf 'installing %s with apt-get (slow: a minute or more) ... ' "${missing[*]}"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  took "installed"
else
  echo "missing ${missing[*]}: install them with your package manager (the sandbox and the dashboard test need them)"
fi

PYTHON=${PYTHON:-python3}
step "virtualenv .venv"
fresh=""
if [ -L .venv ] && [ ! -x .venv/bin/python ]; then
  # A link is another checkout's venv: one is never created (and left without pip) through it.
  echo "a link to $(readlink .venv), which holds no virtualenv: run setup.sh in the checkout it belongs to, or remove the link (rm .venv) to give this checkout its own"
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
  fresh=1
  took "created with $(.venv/bin/python --version)"
else
  took "present ($(.venv/bin/python --version))"
fi

log=.venv/setup-pip.log
# pip runs only when what it installs from changed since its last success: the stamp holds the hash
# of pyproject.toml, constraints.txt, the venv's Python and the venv's checkout (the editable install).
stamp=.venv/setup-stamp
here=$(pwd -P)
owner=$here
if [ -L .venv ]; then
  # A .venv linked from another checkout (a git worktree) belongs to that checkout: pip here would
  # point its editable install at this one and rewrite its stamp, so it is never run. The owner is the
  # checkout its editable install names (else the folder holding the link's target); a linked venv
  # whose install names this checkout is this checkout's own.
  owner=$(cat .venv/lib/python*/site-packages/__editable__.*.pth 2>/dev/null | head -n 1 || true)
  [ -n "$owner" ] || owner=$(dirname "$(readlink -f .venv)")
  owner=$(cd "$owner" 2>/dev/null && pwd -P || echo "$owner")  # as its own setup.sh wrote it: links resolved
fi
inputs=$( { cat pyproject.toml constraints.txt; .venv/bin/python -VV; echo "$owner"; } | sha256sum | cut -d' ' -f1)
if [ -L .venv ] && [ "$owner" != "$here" ]; then
  step "pinned dependencies (constraints.txt)"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
    took "shared .venv of $owner, installed from the same files: pip skipped"
  else
    took "shared .venv of $owner, whose last install differs from this checkout's files: pip skipped (run setup.sh in $owner, or give this checkout its own .venv)"
  fi
elif [ -z "$fresh" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
  step "pinned dependencies (constraints.txt)"
  took "unchanged since the last install (pyproject.toml, constraints.txt, Python): pip skipped"
else
  rm -f "$stamp"
  if [ -n "$fresh" ]; then
    step "pinned dependencies (constraints.txt; first run downloads them: slow, a few minutes)"
  else
    step "pinned dependencies (constraints.txt)"
  fi
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >"$log" 2>&1 \
     && .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]" >>"$log" 2>&1; then
    echo "$inputs" >"$stamp"
    took "installed (pip's output: $log)"
  else
    echo "pip failed; the end of $log:"
    tail -n 40 "$log" >&2
    exit 1
  fi
fi

step "tokenizer"
.venv/bin/python -m harness.core.tokenizer
