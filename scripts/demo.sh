#!/usr/bin/env bash
# demo.sh — the main job, for a person at a terminal (no test stand-in anywhere):
#   a private D-Bus bus with a real gnome-keyring, brokerd with the pinentry presence
#   provider on THIS terminal, a credential you enroll (password typed here, echo off),
#   and its release through the presence prompt you answer. Nothing outside a temp dir
#   is touched; everything is torn down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "${1:-}" != "--inside" ]; then
  scripts/install-deps.sh
  export PATH=/usr/local/go/bin:$PATH
  if ! [ -t 0 ] || ! [ -t 1 ]; then
    echo "demo: run this from an interactive terminal: it asks you for a password and for approval" >&2
    exit 1
  fi
  work=$(mktemp -d /tmp/headless-demo.XXXXXX)
  chmod 700 "$work"
  trap 'rm -rf "$work"' EXIT
  echo "demo: building brokerd and headless…"
  go build -o "$work/bin/" ./cmd/brokerd ./cmd/headless
  export DEMO_WORK=$work DEMO_TTY=$(tty)
  scripts/with-secret-service.sh -- "$repo/scripts/demo.sh" --inside
  exit $?
fi

# --- inside the private bus -------------------------------------------------------------
work=$DEMO_WORK
export PATH=$work/bin:$PATH
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
mkdir -p "$HOME" "$XDG_CONFIG_HOME/headless" "$XDG_DATA_HOME"
chmod 700 "$HOME" "$XDG_CONFIG_HOME" "$XDG_CONFIG_HOME/headless" "$XDG_DATA_HOME"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
pinentry=$(command -v pinentry-tty)
umask 077
cat > "$XDG_CONFIG_HOME/headless/config.json" <<JSON
{"presence": {"provider": "pinentry", "program": "$pinentry", "timeout_seconds": 120}}
JSON

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

# brokerd shows its presence prompt on the terminal it was started from (its stdin). It runs
# in a session of its own so that the prompt, opened by name, is not subject to this shell's
# job control (a background process group reading its controlling terminal gets SIGTTIN).
setsid brokerd <"$DEMO_TTY" >"$work/brokerd.out" 2>&1 &
broker=$!
trap 'kill -TERM $broker 2>/dev/null; wait $broker 2>/dev/null' EXIT
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/headless/broker.sock" ] && break; sleep 0.05; done

origin=http://127.0.0.1:8080
say "1. Enroll a credential. Type any password you like (echo is off; it goes straight to the keyring)."
run headless credentials add --origin "$origin" --account demo@example.test --alias demo

say "2. What an agent may see: metadata only."
run headless credentials list --origin "$origin"
run headless credentials list --origin "$origin" --json

say "3. The keyring really holds it (secret-tool shows the item's attributes, not the password)."
secret-tool search --all xdg:schema dev.headless.Credential 2>&1 | grep -E '^(label|attribute)' || true

say "4. Release it. A presence prompt appears below: press 'a' to allow (or 'd' to deny)."
if run headless credentials verify --origin "$origin" --alias demo; then
  echo "   → released through challenge + presence + vault; the value was zeroed, never shown."
else
  echo "   → not released (that is what a denial or timeout looks like: a typed error, nothing leaked)."
fi

say "5. Asking for the alias on another origin fails closed, before any prompt:"
run headless credentials verify --origin https://other.example --alias demo || true

say "6. The broker's log never holds a password; here is what it recorded:"
sed -e 's/^/   /' "$XDG_RUNTIME_DIR/headless/brokerd.log"

say "Done. Stopping brokerd and tearing down the private keyring."
