#!/usr/bin/env bash
# install.sh — the one root step of a source checkout (the .deb's postinst does the same): it
# makes what only root can and headless's guarantees rest on, and nothing else.
#
#   sudo scripts/install.sh [--bin DIR] [--prefix PREFIX] [--yes]
#
# It says what it will change, then (asking first on a terminal, unless --yes):
#   - adds the system groups "headless" and "headless-broker" (no user is a member of either);
#   - makes the seal key /etc/headless/seal.key (32 random bytes; root:headless-broker, 0640),
#     unless it exists — every saved secret is sealed with it, so it is never replaced;
#   - makes brokerd's state directory /var/lib/headless (root:headless-broker, 1770: only
#     brokerd reaches it; each user's brokerd keeps the credentials' sign-in paths there);
#   - installs brokerd and headless to PREFIX/bin (default /usr/local), root-owned and set-gid:
#     brokerd to headless-broker (only it reads the seal key), headless to headless (brokerd
#     trusts a browser host only with that group; Chromium runs with it).
# The binaries come from DIR (two from one scripts/build.sh run), else they are built now.
# Nothing of another package, and no machine-wide setting, is changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="" prefix=/usr/local yes=0
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --yes|-y) yes=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "install: run as root (sudo scripts/install.sh): only root can make the groups, the key and set-gid binaries" >&2; exit 1; }
keydir=/etc/headless key=/etc/headless/seal.key state=/var/lib/headless dest=$prefix/bin

if [ -L "$state" ] || { [ -e "$state" ] && [ ! -d "$state" ]; }; then
  echo "install: $state is not a directory (a symlink or another file); move it away and run install again: nothing changed" >&2; exit 1
fi
plan=()
getent group headless >/dev/null || plan+=("add the system group headless")
getent group headless-broker >/dev/null || plan+=("add the system group headless-broker")
[ -e "$key" ] || plan+=("make the seal key $key (root:headless-broker, 0640)")
[ "$(stat -c '%U:%G %a' "$state" 2>/dev/null)" = "root:headless-broker 1770" ] ||
  plan+=("make brokerd's state directory $state (root:headless-broker, 1770), or set it so")
plan+=("install $dest/brokerd (root:headless-broker, 2755) and $dest/headless (root:headless, 2755)")
echo "install: this will:" >&2
printf '  - %s\n' "${plan[@]}" >&2
if [ "$yes" = 0 ] && [ -t 0 ]; then
  read -r -p "install: go ahead? [y/N] " answer
  case $answer in y|Y|yes) ;; *) echo "install: nothing changed" >&2; exit 1 ;; esac
fi

if [ -z "$bin" ]; then
  bin=$(mktemp -d)
  trap 'rm -rf "$bin"' EXIT
  scripts/build.sh "$bin" >&2
fi
for b in brokerd headless; do
  [ -f "$bin/$b" ] || { echo "install: $bin/$b is missing" >&2; exit 1; }
done
getent group headless >/dev/null || groupadd --system headless
getent group headless-broker >/dev/null || groupadd --system headless-broker
for g in headless headless-broker; do
  members=$(getent group "$g" | cut -d: -f4)
  [ -z "$members" ] || echo "install: warning: $members is a member of group $g: every program of theirs can pass for headless; remove them (gpasswd -d USER $g)" >&2
done
install -d -o root -g root -m 0755 "$keydir"
if [ ! -e "$key" ]; then
  tmp=$(mktemp "$keydir/.seal.key.XXXXXX")
  head -c 32 /dev/urandom > "$tmp"
  chown root:headless-broker "$tmp"
  chmod 0640 "$tmp"
  sync "$tmp" 2>/dev/null || true
  mv -n "$tmp" "$key"
  rm -f "$tmp"
fi
# A key the install did not make as it makes it is left alone, and reported.
[ "$(stat -c '%U:%G %a %s' "$key")" = "root:headless-broker 640 32" ] ||
  echo "install: warning: $key is $(stat -c '%U:%G %a, %s bytes' "$key"); brokerd refuses it unless it is root:headless-broker 640, 32 bytes" >&2
# brokerd's state: only its group may enter; sticky, so that one user's brokerd cannot rename
# or remove another user's entry. What is in it is each user's, and kept.
install -d -o root -g headless-broker -m 1770 "$state"
chown root:headless-broker "$state"
chmod 1770 "$state"
install -d -m 0755 "$dest"
install -o root -g headless-broker -m 2755 "$bin/brokerd" "$dest/brokerd.new" && mv -f "$dest/brokerd.new" "$dest/brokerd"
install -o root -g headless -m 2755 "$bin/headless" "$dest/headless.new" && mv -f "$dest/headless.new" "$dest/headless"
echo "install: done: $dest/brokerd, $dest/headless; run 'headless doctor' as yourself to check" >&2
