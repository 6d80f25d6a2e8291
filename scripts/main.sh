#!/usr/bin/env bash
# The main job: set up, then sweep today's rotation slice of servers.yaml (UTC week) on this
# machine, validate, run the harness-fault guard against HEAD, and publish records, badges,
# history.csv and pages into the working tree, ending with a summary.
#
# Every argument is passed on to `mcp-context-cost sweep` (e.g. --only memory,time, --date D,
# --commit). Without --commit the sweep rewrites tracked files (results/, badges/, history.csv,
# docs/) and commits nothing; the last line printed here says so.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/setup.sh || exit 1
.venv/bin/mcp-context-cost sweep "$@"
code=$?

# One message line, wrapped between words on a terminal (a log keeps it on one line).
say() {
  if [ -t 1 ] && command -v fold >/dev/null 2>&1; then
    cols=$(stty size 2>/dev/null </dev/tty | cut -d' ' -f2)
    echo "$1" | fold -s -w "${cols:-80}"
  else
    echo "$1"
  fi
}

committing=""
for arg in "$@"; do
  if [ "$arg" = "--commit" ]; then committing=1; fi
done
case "$code" in
  0) if [ -n "$committing" ]; then
       say "main.sh: the sweep published and committed its files as mcp-context-cost-bot (its last line names the commit)"
     else
       say "main.sh: the sweep wrote into tracked files (results/, badges/, history.csv, docs/) and committed nothing; the line above has the commands to commit or discard them (or pass --commit: main.sh hands its arguments to sweep)"
     fi ;;
  1) say "main.sh: nothing was published (sweep exit 1): results, badges, history and pages are as they were" ;;
  2) say "main.sh: bad input (sweep exit 2): nothing was measured or written" ;;
  *) say "main.sh: sweep ended with exit code $code" ;;
esac
exit "$code"
