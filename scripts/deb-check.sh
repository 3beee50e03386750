#!/usr/bin/env bash
# deb-check.sh — what CI checks of the Debian package (scripts/test.sh runs it, as root):
# build it (scripts/deb.sh), install it with apt (apt resolves its dependencies), then check
# what its postinst made: the groups headless and headless-broker, /usr/bin/brokerd and
# /usr/bin/headless root-owned and set-gid to them (2755), the seal key root:headless-broker
# 0640 of 32 bytes (one that was there before is kept as it was), brokerd's state directory
# /var/lib/headless root:headless-broker 1770, and no dpkg-statoverride of
# Chromium or a pinentry (an upgrade takes back the old package's "root root 711" ones and no
# other). Then it runs the installed binaries: version; brokerd as uid 65534, which must be
# trusted (given its group); doctor as a user runs it in a session with a keyring (a private
# bus with gnome-keyring, private XDG dirs), which must report no failed check; and
# systemd-analyze verify of the installed user units. The package is removed again afterwards
# unless it was installed before; the groups and the key stay, as a remove leaves them.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb-check: run as root (it installs the package with apt)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
deb=$(scripts/deb.sh "$work/out" | tail -1)
echo "deb-check: built $deb ($(du -k "$deb" | cut -f1) KiB)"
# lintian: no error and no warning but those overridden, each with its reason
# (contrib/deb/lintian-overrides).
command -v lintian >/dev/null || { echo "deb-check: lintian is not installed (scripts/test.sh installs it)" >&2; exit 1; }
if ! lintian --fail-on error,warning "$deb" 2> >(grep -v 'running with root privileges' >&2); then
  echo "deb-check: lintian found errors or warnings in $deb" >&2
  exit 1
fi
echo "deb-check: lintian: no errors or warnings (overrides: $(grep -c '^headless:' contrib/deb/lintian-overrides))"
before=no
dpkg-query -W -f='${Status}' headless 2>/dev/null | grep -q 'install ok installed' && before=yes
key=/etc/headless/seal.key
keysum=""
[ -e "$key" ] && keysum=$(sha256sum < "$key")
nobody_state=/var/lib/headless/65534 # what the brokerd run as uid 65534 below makes, unless it was there
nobody_kept=no
[ -e "$nobody_state" ] && nobody_kept=yes
olds=(/usr/lib/chromium/chromium /usr/bin/pinentry-curses /usr/bin/pinentry-tty /usr/bin/pinentry-gnome3)
planted=() # "MODE PATH": an override this script added, and the file's mode before it
cleanup() {
  for p in ${planted[@]+"${planted[@]}"}; do
    f=${p#* }
    if dpkg-statoverride --list "$f" >/dev/null 2>&1; then dpkg-statoverride --remove "$f" >/dev/null 2>&1 || true; fi
    if [ -e "$f" ]; then chmod "${p%% *}" "$f"; fi
  done
  [ -z "${bpid:-}" ] || kill "$bpid" 2>/dev/null || true
  [ "$nobody_kept" = yes ] || rm -rf "$nobody_state"
  [ "$before" = yes ] || apt-get remove -y -qq headless >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --reinstall --allow-downgrades "$deb" >/dev/null

fail() { echo "deb-check: $*" >&2; exit 1; }
dpkg-query -W -f='deb-check: installed ${Package} ${Version}\n' headless
for f in /usr/bin/headless /usr/bin/brokerd /usr/lib/systemd/user/brokerd.socket /usr/lib/systemd/user/brokerd.service /usr/share/doc/headless/README.md; do
  [ -e "$f" ] || fail "$f is missing"
done
# postinst: the groups, the set-gid binaries, the seal key and brokerd's state directory
# (scripts/install.sh's facts).
check_installed() {
  for g in headless headless-broker; do
    getent group "$g" >/dev/null || fail "group $g is missing"
  done
  [ "$(stat -c '%U:%G %a' /usr/bin/brokerd)" = "root:headless-broker 2755" ] ||
    fail "/usr/bin/brokerd is $(stat -c '%U:%G %a' /usr/bin/brokerd), not root:headless-broker 2755"
  [ "$(stat -c '%U:%G %a' /usr/bin/headless)" = "root:headless 2755" ] ||
    fail "/usr/bin/headless is $(stat -c '%U:%G %a' /usr/bin/headless), not root:headless 2755"
  [ "$(stat -c '%U:%G %a' /etc/headless)" = "root:root 755" ] || fail "/etc/headless is $(stat -c '%U:%G %a' /etc/headless), not root:root 755"
  [ ! -L /var/lib/headless ] && [ "$(stat -c '%U:%G %a' /var/lib/headless)" = "root:headless-broker 1770" ] ||
    fail "/var/lib/headless is $(stat -c '%U:%G %a' /var/lib/headless), not a directory root:headless-broker 1770"
  [ "$(stat -c '%U:%G %a %s' "$key")" = "root:headless-broker 640 32" ] ||
    fail "$key is $(stat -c '%U:%G %a, %s bytes' "$key"), not root:headless-broker 640, 32 bytes"
  if [ -n "$keysum" ]; then
    [ "$(sha256sum < "$key")" = "$keysum" ] || fail "the install replaced the seal key that was there"
  else
    keysum=$(sha256sum < "$key")
  fi
}
check_installed
# Nothing of Chromium's or the pinentry's: no override made by the package, modes as shipped.
for f in "${olds[@]}"; do
  o=$(dpkg-statoverride --list "$f" 2>/dev/null || true)
  [ "$o" != "root root 711 $f" ] || fail "$f has the override root root 711 after the install"
  [ ! -e "$f" ] || [ "$(stat -c %a "$f")" != 711 ] || fail "$f is mode 0711 after the install"
done

# An upgrade from the old package, which added "root root 711" overrides to Chromium and the
# pinentry programs: a reinstall (postinst configure with the version before) takes those back
# and gives the mode back, and leaves an override of another value alone. Only on files
# without an override of the administrator's.
free=()
for f in "${olds[@]}"; do
  [ -e "$f" ] && ! dpkg-statoverride --list "$f" >/dev/null 2>&1 && free+=("$f")
done
if [ ${#free[@]} -ge 2 ]; then
  keep=${free[-1]}
  unset 'free[-1]'
  for f in "${free[@]}"; do
    planted+=("$(stat -c %a "$f") $f")
    dpkg-statoverride --update --add root root 0711 "$f"
  done
  planted+=("$(stat -c %a "$keep") $keep")
  dpkg-statoverride --add root root 0755 "$keep"
  apt-get install -y -qq --reinstall "$deb" >/dev/null 2>"$work/reinstall.err" || { cat "$work/reinstall.err" >&2; fail "reinstall failed"; }
  for f in "${free[@]}"; do
    ! dpkg-statoverride --list "$f" >/dev/null 2>&1 || fail "the upgrade left the old override of $f: $(dpkg-statoverride --list "$f")"
    [ "$(stat -c %a "$f")" = 755 ] || fail "the upgrade left $f mode $(stat -c %a "$f"), not 0755"
  done
  [ "$(dpkg-statoverride --list "$keep" 2>/dev/null)" = "root root 755 $keep" ] || fail "the upgrade removed another override of $keep"
  dpkg-statoverride --remove "$keep"
  echo "deb-check: an upgrade took back the old overrides of ${free[*]} and left $keep's own"
  check_installed
else
  echo "deb-check: warning: the old-override upgrade was not checked (Chromium and the pinentry programs have overrides already)" >&2
fi

v=$(/usr/bin/headless version | head -1)
b=$(/usr/bin/brokerd --version)
echo "deb-check: $v; $b"
/usr/bin/headless version --json | grep -q '"commit":"[0-9a-f]\{40\}' || { echo "deb-check: headless version names no commit: $(/usr/bin/headless version --json)" >&2; exit 1; }
# The man pages render with no warning from man, and name their programs.
for page in /usr/share/man/man1/headless.1.gz /usr/share/man/man8/brokerd.8.gz; do
  warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || { echo "deb-check: man -l $page failed: $warn" >&2; exit 1; }
  [ -z "$warn" ] || { echo "deb-check: man -l $page warns: $warn" >&2; exit 1; }
  MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q "^NAME" || { echo "deb-check: $page renders no NAME section" >&2; exit 1; }
done
# The installed completion scripts load and complete a command and a flag.
got=$(bash --norc --noprofile -c 'source /usr/share/bash-completion/completions/headless; COMP_WORDS=(headless sess); COMP_CWORD=1; _headless; echo "${COMPREPLY[*]}"; COMP_WORDS=(headless visit --sess); COMP_CWORD=2; _headless; echo "${COMPREPLY[*]}"')
[ "$got" = "$(printf 'session
--session')" ] || { echo "deb-check: bash completion: $got" >&2; exit 1; }
got=$(fish --no-config -c "source /usr/share/fish/vendor_completions.d/headless.fish; complete --do-complete='headless sess'" | cut -f1)
[ "$got" = session ] || { echo "deb-check: fish completion: $got" >&2; exit 1; }
got=$(zsh -f -c 'compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }; words=(headless sess); CURRENT=2; source /usr/share/zsh/vendor-completions/_headless' | grep -x session || true)
[ "$got" = session ] || { echo "deb-check: zsh completion does not offer session for 'headless sess'" >&2; exit 1; }
echo "deb-check: man pages render; bash, zsh and fish completion load and complete"
[ "${v#headless }" = "${b#brokerd }" ] || { echo "deb-check: headless and brokerd are of different builds" >&2; exit 1; }

# The installed brokerd as a user runs it (uid 65534): the kernel gives it its group, so it
# reads the seal key and is trusted (status says why when it is not).
nhome="$work/nobody"
mkdir -p "$nhome/run" && chmod 755 "$work" && chmod 700 "$nhome" "$nhome/run" && chown -R 65534:65534 "$nhome"
nenv=(env -i PATH=/usr/bin:/bin HOME="$nhome" XDG_RUNTIME_DIR="$nhome/run" XDG_CONFIG_HOME="$nhome/config" XDG_DATA_HOME="$nhome/data" LANG=C.UTF-8)
(cd / && exec setpriv --reuid 65534 --regid 65534 --clear-groups "${nenv[@]}" /usr/bin/brokerd) >"$work/brokerd.out" 2>&1 &
bpid=$!
for _ in $(seq 100); do [ -S "$nhome/run/headless/broker.sock" ] && break; sleep 0.1; done
st=$(cd / && setpriv --reuid 65534 --regid 65534 --clear-groups "${nenv[@]}" /usr/bin/headless status --json) || true
kill "$bpid" 2>/dev/null || true
wait "$bpid" 2>/dev/null || true
bpid=""
case $st in
  *'"broker":{"running":true'*) ;;
  *) cat "$work/brokerd.out" >&2; fail "brokerd as uid 65534 did not come up: $st" ;;
esac
case $st in
  *'"untrusted"'*) cat "$work/brokerd.out" >&2; fail "the installed brokerd as uid 65534 is untrusted: $st" ;;
esac
echo "deb-check: /usr/bin/brokerd as uid 65534 is trusted"

# The doctor from /usr/bin, as a user runs it: no check may fail (exit status 0).
home="$work/home"
mkdir -p "$home/run" && chmod 700 "$home" "$home/run"
set +e
env -i PATH=/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR="$home/run" LANG=C.UTF-8 \
  scripts/with-secret-service.sh -- /usr/bin/headless doctor
rc=$?
set -e
[ "$rc" = 0 ] || { echo "deb-check: /usr/bin/headless doctor exited $rc" >&2; exit 1; }

# systemd's own check of the installed user units: nothing to say.
out=$(cd / && XDG_RUNTIME_DIR="$home/run" HOME="$home" systemd-analyze --user verify \
  /usr/lib/systemd/user/brokerd.socket /usr/lib/systemd/user/brokerd.service 2>&1) \
  || { echo "deb-check: systemd-analyze verify failed: $out" >&2; exit 1; }
[ -z "$out" ] || { echo "deb-check: systemd-analyze verify: $out" >&2; exit 1; }
echo "deb-check: passed"
