#!/usr/bin/env bash
# Set up, then run the whole test suite (real servers from npm and PyPI included).
# pytest's exit code 5 ("no tests collected") is a failure here, never a silent pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/setup.sh || exit 1
# This checkout's harness first, also in the subprocesses tests start: a .venv shared with another
# checkout has that checkout's editable install.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/python -m pytest "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$code"
