#!/usr/bin/env bash
# The main job: set up, then sweep today's rotation slice of servers.yaml (UTC week) on this
# machine, validate, run the harness-fault guard against HEAD, and publish records, badges,
# history.csv and pages into the working tree, ending with a summary. Add --commit to commit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/mcp-context-cost sweep "$@"
