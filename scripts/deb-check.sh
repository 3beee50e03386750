#!/usr/bin/env bash
# deb-check.sh — what CI checks of the Debian package (scripts/test.sh runs it, as root):
# build it (scripts/deb.sh), install it with apt (apt resolves its dependencies), then run the
# installed /usr/bin/headless and /usr/bin/brokerd: version, and doctor as a user runs it in a
# session with a keyring (a private bus with gnome-keyring, private XDG dirs), which must
# report no failed check; and systemd-analyze verify of the installed user units. The package
# is removed again afterwards unless it was installed before.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb-check: run as root (it installs the package with apt)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
deb=$(scripts/deb.sh "$work/out" | tail -1)
echo "deb-check: built $deb ($(du -k "$deb" | cut -f1) KiB)"
before=no
dpkg-query -W -f='${Status}' headless 2>/dev/null | grep -q 'install ok installed' && before=yes
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --reinstall --allow-downgrades "$deb" >/dev/null
cleanup() {
  [ "$before" = yes ] || apt-get remove -y -qq headless >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

dpkg-query -W -f='deb-check: installed ${Package} ${Version}\n' headless
for f in /usr/bin/headless /usr/bin/brokerd /usr/lib/systemd/user/brokerd.socket /usr/lib/systemd/user/brokerd.service /usr/share/doc/headless/README.md; do
  [ -e "$f" ] || { echo "deb-check: $f is missing" >&2; exit 1; }
done
[ "$(stat -c '%U %a' /usr/bin/headless)" = "root 755" ] || { echo "deb-check: /usr/bin/headless is not root-owned 0755" >&2; exit 1; }
# postinst: the programs a secret is typed into are unreadable, so their memory is closed to
# the user's processes.
for f in /usr/lib/chromium/chromium /usr/bin/pinentry-curses; do
  [ "$(stat -c '%U %a' "$f")" = "root 711" ] || { echo "deb-check: $f is not root-owned 0711 after the install" >&2; exit 1; }
done

v=$(/usr/bin/headless version)
b=$(/usr/bin/brokerd --version)
echo "deb-check: $v; $b"
[ "${v#headless }" = "${b#brokerd }" ] || { echo "deb-check: headless and brokerd are of different builds" >&2; exit 1; }

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
