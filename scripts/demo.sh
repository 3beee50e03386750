#!/usr/bin/env bash
# demo.sh — the main job, for a person at a terminal, with no test stand-in anywhere:
#   a local sign-in site (scripts/demosite) on which you create an account, a private D-Bus
#   bus with a real gnome-keyring, the same password saved in it through headless's trusted
#   path (typed here, echo off), sealed with the machine's seal key and a headless passphrase
#   you choose, brokerd with the passphrase presence provider (pinentry-tty) on THIS terminal,
#   the browser host on Debian Chromium, and then what an agent does:
#     headless visit http://127.0.0.1:PORT/login      → auth_required, aliases: demo
#     headless auth login --alias demo               → YOU type the passphrase → typed
#   and the verified result, the signed-in page, the site's own log, and a search of everything
#   headless wrote for the password (0 hits).
#
# Run as root, it first does the set-up root does once (scripts/install-deps.sh, then
# scripts/install.sh: the two groups, the seal key, brokerd and headless set-gid in
# /usr/local/bin; each says what it changes), then runs everything else — the person's and the
# agent's side — as a non-root user, as headless is meant to run: a temporary system user
# "headless-demo" (removed at the end) whose home is the demo's temp dir. This terminal is
# lent to that user for the demo (its owner and mode are given back at the end).
#
# The password is never in an argument, an environment variable or a pipe: the site reads it
# from the terminal itself (like a site's sign-up form), and headless reads it from the
# terminal itself (`credentials add`). See scripts/demosite/main.go for why the site asks.
set -euo pipefail
cd "$(dirname "$0")/.."
demo_user=headless-demo

if [ "${1:-}" != "--inside" ]; then
  [ "$(id -u)" = 0 ] || { echo "demo: run as root (it installs what is missing, then runs the demo as a non-root user)" >&2; exit 1; }
  if ! [ -t 0 ] || ! [ -t 1 ]; then
    echo "demo: run this from an interactive terminal: it asks you for a password and for approval" >&2
    exit 1
  fi
  scripts/install-deps.sh
  . scripts/goenv.sh
  scripts/install.sh --yes
  tty=$(tty)
  tty_owner=$(stat -c %u:%g "$tty") tty_mode=$(stat -c %a "$tty")
  work=$(mktemp -d /tmp/headless-demo.XXXXXX)
  made_user=0
  finish() {
    local status=$?
    set +e
    chown "$tty_owner" "$tty"; chmod "$tty_mode" "$tty"
    if [ "$made_user" = 1 ]; then
      pkill -KILL -u "$demo_user" 2>/dev/null; sleep 0.2
      userdel "$demo_user" 2>/dev/null
    fi
    rm -rf "$work"
    exit "$status"
  }
  trap finish EXIT
  if ! getent passwd "$demo_user" >/dev/null; then
    echo "demo: adding the temporary system user $demo_user (removed at the end)" >&2
    useradd --system --user-group --no-create-home --home-dir "$work/home" --shell /usr/sbin/nologin "$demo_user"
    made_user=1
  fi
  echo "demo: building the demo site…"
  mkdir -p "$work/bin" "$work/scripts"
  go build -o "$work/bin/" ./scripts/demosite
  cp scripts/demo.sh scripts/with-secret-service.sh "$work/scripts/"
  chmod 755 "$work" "$work/bin" "$work/scripts"
  mkdir -m 700 "$work/d"
  chown "$demo_user:" "$work/d"
  # The person's terminal, lent to the demo user: the site, pinentry-tty and brokerd open it.
  chown "$demo_user" "$tty"; chmod 600 "$tty"
  status=0
  runuser -u "$demo_user" -- env -i PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" TERM="${TERM:-dumb}" \
    LANG="${LANG:-C.UTF-8}" DEMO_WORK="$work/d" DEMO_TTY="$tty" \
    "$work/scripts/with-secret-service.sh" -- "$work/scripts/demo.sh" --inside || status=$?
  exit $status
fi

# --- inside the private bus -------------------------------------------------------------
work=$DEMO_WORK
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
mkdir -p "$HOME" "$XDG_CONFIG_HOME/headless" "$XDG_DATA_HOME" "$work/out"
chmod 700 "$HOME" "$XDG_CONFIG_HOME" "$XDG_CONFIG_HOME/headless" "$XDG_DATA_HOME" "$work/out"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
umask 077
# The real terminal pinentry: the person at this terminal types the passphrase into it. The
# passphrase provider keeps every saved password sealed with it, so no other program of yours
# can read one from the keyring.
pinentry=$(command -v pinentry-tty)
cat > "$XDG_CONFIG_HOME/headless/config.json" <<JSON
{"presence": {"provider": "passphrase", "program": "$pinentry", "timeout_seconds": 120}}
JSON

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
note() { printf '   %s\n' "$*"; }
transcript=$work/out/cli.txt
# run shows a command and runs it; its output is also kept, so that the final search covers
# everything the CLI printed.
run() {
  printf '$ %s\n' "$*" | tee -a "$transcript"
  "$@" 2>&1 | tee -a "$transcript"
}

site_pid="" broker_pid=""
# cleanup never fails: a process that is already gone (headless stop stopped it, or it exited)
# is fine, and the demo's exit status is the status of what it showed, not of the tear-down.
cleanup() {
  local status=$?
  set +e
  [ -z "$site_pid" ] || { kill -TERM "$site_pid" 2>/dev/null; wait "$site_pid" 2>/dev/null; }
  if [ -S "$XDG_RUNTIME_DIR/headless/control.sock" ] || [ -S "$XDG_RUNTIME_DIR/headless/broker.sock" ]; then
    headless stop >/dev/null 2>&1
  fi
  [ -z "$broker_pid" ] || { kill -TERM "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; }
  exit "$status"
}
trap cleanup EXIT

# --- 1. the site ------------------------------------------------------------------------
bold "1. A local sign-in site. Create its account, as you would on any site."
note "The site asks on this terminal itself (echo off); nothing passes the password to it."
demosite -account demo@example.test -ready "$work/site.url" -report "$work/sweep.txt" -sweep "$work" \
  >"$work/site.log" 2>&1 &
site_pid=$!
while ! [ -s "$work/site.url" ]; do
  kill -0 "$site_pid" 2>/dev/null || { echo "demo: the demo site exited:" >&2; cat "$work/site.log" >&2; exit 1; }
  sleep 0.1
done
base=$(cat "$work/site.url")
note "The site is up at $base (log in $work/site.log)."

# brokerd shows its presence prompt on the terminal it was started from (its stdin). It runs
# in a session of its own so that the prompt, opened by name, is not subject to this shell's
# job control (a background process group reading its controlling terminal gets SIGTTIN).
setsid brokerd <"$DEMO_TTY" >"$work/brokerd.out" 2>&1 &
broker_pid=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/headless/broker.sock" ] && break; sleep 0.05; done

# --- 2. enrol ---------------------------------------------------------------------------
bold "2. Save the same password in headless: sealed, it goes straight to the OS keyring."
note "Type the password you just chose (twice, echo off). A different one will make the"
note "sign-in fail — which headless reports as 'failed', never as success."
note "Then brokerd's prompt asks you to choose your headless passphrase (twice, at least 12"
note "characters): the password is sealed with it, and every sign-in will ask you for it."
for try in 1 2 3; do
  run headless credentials add --origin "$base" --account demo@example.test --alias demo && break
  [ "$try" = 3 ] && { echo "demo: the credential was not saved" >&2; exit 1; }
  note "Not saved; again, please."
done

bold "3. What an agent may see about it: metadata only."
run headless credentials list --origin "$base"
note "And what any program of yours gets from the keyring (secret-tool): the sealed text only."
printf '$ secret-tool lookup alias demo | cut -c1-32\n' | tee -a "$transcript"
{ secret-tool lookup alias demo | cut -c1-32; echo; } 2>&1 | tee -a "$transcript"

# --- 4. the agent's side ----------------------------------------------------------------
bold "4. Start the browser host (Debian Chromium over a private pipe)."
run headless start

bold "5. The agent visits the login page. headless finds the form and offers the alias — not the password."
run headless visit "$base/login"

bold "6. The agent signs in by alias. A presence prompt appears below: type your headless passphrase."
note "(Three wrong passphrases, or an empty one three times, deny: nothing is released.)"
printf '$ headless auth login --alias demo --json\n' | tee -a "$transcript"
out=$(headless auth login --alias demo --json 2>&1) || true
printf '%s\n' "$out" | tee -a "$transcript"
worked=0
case "$out" in
  *'"status":"authenticated"'*)
    worked=1
    note "→ verified: authenticated. brokerd opened the sealed password with your passphrase, typed it into"
    note "  the site's own login field, submitted, and saw the site move to a page without a login form." ;;
  *'"status":"failed"'*)
    note "→ verified: failed. The site refused the password (did you type the same one twice?)." ;;
  *PRESENCE_*)
    note "→ not released: that is what a denial or a timeout looks like — a typed error, nothing typed." ;;
  *)
    note "→ not authenticated (see the result above)." ;;
esac

bold "7. What the agent sees now."
run headless snapshot

bold "8. The site's own log: did it really receive the right password?"
sed -e 's/^/   /' "$work/site.log"

bold "9. What headless logged (no secret in there):"
note "host.log:"
grep -E 'credential typed|method=auth.login' "$XDG_RUNTIME_DIR/headless/host.log" | tail -n 4 | sed -e 's/^/     /' || true
note "brokerd.log:"
grep -E 'msg=(released|denied)|method=(challenge|release)' "$XDG_RUNTIME_DIR/headless/brokerd.log" | tail -n 4 | sed -e 's/^/     /' || true

bold "10. Stop, then search everything for the password."
run headless stop
# The search is done by the demo site, the only party here besides the keyring that knows the
# password; this script never holds it. It covers the whole demo directory: host and broker
# logs, the runtime dir, the browser profile (after the graceful stop), the config and every
# line the CLI printed.
rm -f "$work/sweep.txt"
kill -USR1 "$site_pid"
for _ in $(seq 300); do [ -s "$work/sweep.txt" ] && break; sleep 0.1; done
sed -e 's/^/   /' "$work/sweep.txt"

bold "Done. Stopping the site and tearing down the private keyring."
# The main job worked only if the sign-in was verified as authenticated.
[ "$worked" = 1 ] || { echo "demo: the sign-in was not authenticated (see step 6)" >&2; exit 1; }
