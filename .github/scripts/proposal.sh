#!/usr/bin/env bash
# Commit a proposed catalog change on a new branch, for push.sh to propose as a pull request.
#
# Usage: proposal.sh PATCH BRANCH MESSAGE. PATCH is a `git diff` made by a read-only job, which may
# have run catalog code: it is applied only if it changes servers.yaml and nothing else, and the
# result must pass the catalog's schema. An empty PATCH proposes nothing. Writes branch=BRANCH to
# GITHUB_OUTPUT when there is a commit to propose.
set -euo pipefail
patch="$1" branch="$2" message="$3"

if [ ! -s "$patch" ]; then
  echo "nothing to propose"
  exit 0
fi
touched="$(git apply --numstat "$patch" | cut -f3 | sort -u)"
if [ "$touched" != "servers.yaml" ]; then
  echo "::error title=proposal refused::the proposal must change servers.yaml alone"
  exit 1
fi
git apply --index "$patch"
.venv/bin/check-jsonschema --schemafile schemas/servers.schema.json servers.yaml
git switch -q -c "$branch"
git -c user.name=mcp-context-cost-bot -c user.email=mcp-context-cost-bot@users.noreply.github.com \
  commit -q -m "$message" -- servers.yaml
echo "branch=$branch" >> "${GITHUB_OUTPUT:-/dev/null}"
