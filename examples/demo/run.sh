#!/usr/bin/env bash
# The demo: the bundled notes server (examples/notes-server), registered in
# a fresh config, reached by a turn through spear-term.
#
#   make demo        builds bin/ and runs this
#
# Settings: DEMO_DIR (default .demo, made afresh), SPEAR_TERM,
# SPEAR_CAPABILITY and NOTES_SERVER_BIN (default bin/…).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
demo=${DEMO_DIR:-$repo/.demo}
term=${SPEAR_TERM:-$repo/bin/spear-term}
cap=${SPEAR_CAPABILITY:-$repo/bin/spear-capability}
notes=${NOTES_SERVER_BIN:-$repo/bin/notes-server}
notes=$(command -v "$notes")

rm -rf "$demo"
mkdir -p "$demo/config" "$demo/workspace" "$demo/notes"
demo=$(cd "$demo" && pwd)
printf 'Ship the capability gateway.\nWrite the operator docs.\n' > "$demo/notes/plan.txt"

sed -e "s|@DEMO@|$demo|g" "$here/projects.json" > "$demo/config/projects.json"
sed -e "s|@DEMO@|$demo|g" -e "s|@NOTES_SERVER@|$notes|g" "$here/capabilities.json" > "$demo/config/capabilities.json"
sed -e "s|@DEMO@|$demo|g" "$here/turn.json" > "$demo/turn.json"

export SPEAR_CONFIG_DIR=$demo/config
export SPEAR_STATE_DIR=$demo/state
export SPEAR_TURN_FILE=$demo/turn.json
# Stands in for a person: shows the request and approves it.
export SPEAR_CONFIRM_COMMAND="$here/confirm.sh"

step() {
	if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi
}
turn() {
	printf '$ %s\n' "$1"
	(cd "$demo/workspace" && "$term" -c "$1") || printf '(exit status %d)\n' "$?"
}

step "the operator checks the registry (spear-capability check)"
"$cap" check || true

step "the harness puts this block into the turn's context (spear-capability context)"
"$cap" context

step "inside the turn: an ordinary command goes to bash untouched"
turn 'echo "working in $PWD"'

step "inside the turn: list, describe"
turn 'spear-capability list'
turn 'spear-capability describe notes/write_note'

step "inside the turn: a READ runs at once; its result is framed as external content"
turn "spear-capability invoke notes/search_notes '{\"query\": \"gateway\"}'"

step "inside the turn: a WRITE asks a person first (SPEAR_CONFIRM_COMMAND)"
turn "spear-capability invoke notes/write_note '{\"name\": \"status\", \"text\": \"gateway demo ran\"}'"
turn "spear-capability invoke notes/read_note '{\"name\": \"status\"}'"

step "inside the turn: refusals say what is wrong and how to write it"
turn 'spear-capability list | head -1'
turn "spear-capability invoke notes/read_note '{\"title\": \"status\"}'"
turn "spear-capability invoke tracker/search '{}'"

step "the audit trail (spear-capability audit --event capability_invoked)"
"$cap" audit --event capability_invoked

step "the session kept one notes server for every command; the operator stops it (spear-capability sessions)"
"$cap" sessions
"$cap" sessions stop

printf '\nThe demo left its config, state and notes in %s\n' "$demo"
