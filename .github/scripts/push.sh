#!/usr/bin/env bash
# Push HEAD to $BRANCH: fetch, rebase, retry three times. With PR_BASE set, propose instead: push
# HEAD to the bot's own branch $BRANCH (replacing what an earlier run of the day left there) and open
# a pull request into $PR_BASE titled $PR_TITLE, its body read from the file $PR_BODY, with gh (an
# open pull request from $BRANCH is left open: the push updated it).
#
# The write token ($TOKEN) reaches these git commands only, through their environment
# (GIT_CONFIG_COUNT/KEY/VALUE: an http extraheader, as actions/checkout would set). It is never
# written to .git/config, never on a command line, and no other step of the job holds it: every
# checkout in these workflows sets persist-credentials: false.
set -uo pipefail
: "${TOKEN:?the write token}" "${BRANCH:?the branch to push}"

basic="$(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
echo "::add-mask::$basic"
token="$TOKEN" # for gh alone, through its environment
unset TOKEN

authed() {
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" \
    GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic" git "$@"
}

git config user.name "mcp-context-cost-bot"
git config user.email "mcp-context-cost-bot@users.noreply.github.com"

if [ -n "${PR_BASE:-}" ]; then
  : "${PR_TITLE:?the pull request's title}" "${PR_BODY:?a file holding the pull request's body}"
  authed push --force origin "HEAD:refs/heads/$BRANCH" || {
    echo "::error title=push failed::could not push $BRANCH"
    exit 1
  }
  if GH_TOKEN="$token" gh pr view "$BRANCH" --repo "$GITHUB_REPOSITORY" --json state --jq .state | grep -qx OPEN; then
    echo "the pull request from $BRANCH is open already; the push updated it"
    exit 0
  fi
  GH_TOKEN="$token" gh pr create --repo "$GITHUB_REPOSITORY" --base "$PR_BASE" --head "$BRANCH" \
    --title "$PR_TITLE" --body-file "$PR_BODY"
  exit
fi

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
