#!/usr/bin/env bash
# The main job: set up, then measure the reference server from servers.yaml and write its record
# (results/<name>/measurement.json) and badge (badges/<name>.json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
reference=$(.venv/bin/python -c 'from harness.db.catalog import load_catalog; print(load_catalog("servers.yaml").reference)')
.venv/bin/mcp-context-cost measure --server "$reference"
.venv/bin/mcp-context-cost verify "results/$reference/measurement.json"
