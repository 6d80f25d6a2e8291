#!/usr/bin/env bash
# Push HEAD to $BRANCH: fetch, rebase, retry three times.
#
# The write token ($TOKEN) reaches these git commands only, through their environment
# (GIT_CONFIG_COUNT/KEY/VALUE: an http extraheader, as actions/checkout would set). It is never
# written to .git/config, never on a command line, and no other step of the job holds it: every
# checkout in these workflows sets persist-credentials: false.
set -uo pipefail
: "${TOKEN:?the write token}" "${BRANCH:?the branch to push}"

basic="$(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
echo "::add-mask::$basic"
unset TOKEN

authed() {
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" \
    GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic" git "$@"
}

git config user.name "mcp-context-cost-bot"
git config user.email "mcp-context-cost-bot@users.noreply.github.com"
for attempt in 1 2 3; do
  if authed pull --rebase origin "$BRANCH" && authed push origin "HEAD:$BRANCH"; then
    exit 0
  fi
  git rebase --abort 2>/dev/null || true
  echo "push attempt $attempt failed" >&2
  sleep $((attempt * 10))
done
echo "::error title=push failed::could not push to $BRANCH after 3 attempts"
exit 1
