package hardening

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// What the install makes (scripts/install.sh, the .deb), and only root can: two system groups
// no user is a member of, brokerd set-gid to BrokerGroup, the headless binary set-gid to
// HostGroup, the seal key readable by BrokerGroup alone, and StateDir, which only BrokerGroup
// can enter.
const (
	// BrokerGroup is brokerd's group: the seal key's group. Nothing else runs with it.
	BrokerGroup = "headless-broker"
	// HostGroup is the browser host's group (and Chromium's, and the pinentry's): brokerd
	// trusts a host connection only with it, and the kernel keeps every process without it
	// out of their memory.
	HostGroup = "headless"
	// KeyPath is the seal key (package internal/broker/seal): root:headless-broker, mode 0640.
	KeyPath = "/etc/headless/seal.key"
	// StateDir is where brokerd keeps what no process of the user may write (each
	// credential's known sign-in paths): root:headless-broker, mode 1770 (sticky: one user's
	// brokerd cannot rename or remove another's entry). brokerd keeps each user's state in
	// StateDir/UID, made by brokerd mode 0700; the user cannot reach it, because only
	// BrokerGroup may search StateDir ([CheckStateDir]).
	StateDir = "/var/lib/headless"
)

// SystemPath is the PATH of every program headless starts with a group of its own (the host,
// Chromium, the pinentry): directories only root can write. The user's PATH would let a
// program of theirs run with the group: red-team round 11 put an xdg-settings of its own first
// on PATH, and Chromium ran it, with the headless group, when a page asked for an unknown URL
// scheme; it read the password out of the browser's memory.
const SystemPath = "/usr/bin:/bin"

// PinentryShim is the hidden command of the headless binary that execs a pinentry for brokerd
// ('headless pinentry-exec PROGRAM'), so that the pinentry runs with the host group.
const PinentryShim = "pinentry-exec"

// LookupGroup returns the gid of the system group name (from /etc/group, root's file).
func LookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, fmt.Errorf("group %s: %w (install headless: it makes the group)", name, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil || gid <= 0 {
		return -1, fmt.Errorf("group %s has gid %q", name, g.Gid)
	}
	return gid, nil
}

// Granted reports whether this process runs with an effective gid other than its real one:
// the kernel gave it the group of a set-gid executable (which it does not under a tracer,
// under no_new_privs, on a nosuid mount, or in a user namespace that leaves the file's owner or
// group unmapped).
func Granted() (egid int, ok bool) {
	return os.Getegid(), os.Getegid() != os.Getgid()
}

// InGroup reports whether the user's supplementary groups include gid: then every program of
// the user has the group, and what it guards is open to them.
func InGroup(gid int) bool {
	groups, err := os.Getgroups()
	if err != nil {
		return true // could not look: count it as open
	}
	for _, g := range groups {
		if g == gid {
			return true
		}
	}
	return false
}

// SetGIDTo checks that the open executable f (at path) is owned by root, set-gid, and of the
// group gid: a file only root can make, so that whatever runs from it runs with that group.
func SetGIDTo(f *os.File, path string, gid int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case st.Uid != 0:
		return fmt.Errorf("%s is owned by uid %d, not root: install headless (scripts/install.sh or the .deb)", path, st.Uid)
	case uint32(st.Mode)&syscall.S_ISGID == 0 || int(st.Gid) != gid:
		return fmt.Errorf("%s is not set-gid to group %d (mode %04o, group %d): install headless (scripts/install.sh or the .deb)", path, gid, uint32(st.Mode)&0o7777, st.Gid)
	}
	return nil
}

// CheckStateDir checks that dir (StateDir) is as the install makes it: a directory, not a
// symlink, owned by root, of the group gid (BrokerGroup), sticky, and closed to others (no
// process without the group may search it, so none of the user's reaches the user's own
// entry in it). The group may write it: brokerd makes each user's entry.
func CheckStateDir(dir string, gid int) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Errorf("%s: %w (install headless: scripts/install.sh or the .deb makes it)", dir, err)
	}
	mode := uint32(st.Mode)
	switch {
	case mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%s is not a directory (a symlink or another file): install headless (scripts/install.sh or the .deb)", dir)
	case st.Uid != 0:
		return fmt.Errorf("%s is owned by uid %d, not root: install headless (scripts/install.sh or the .deb)", dir, st.Uid)
	case int(st.Gid) != gid:
		return fmt.Errorf("%s is of group %d, not %s (%d): install headless (scripts/install.sh or the .deb)", dir, st.Gid, BrokerGroup, gid)
	case mode&0o007 != 0 || mode&syscall.S_ISVTX == 0:
		return fmt.Errorf("%s has mode %04o, not 1770 (sticky, nothing for others): install headless (scripts/install.sh or the .deb)", dir, mode&0o7777)
	}
	return nil
}

// CheckPinentry is the rule a pinentry program must meet for the shim to start it (and brokerd
// to configure it): an absolute path, a name that starts with "pinentry" (so that the shim,
// which runs with the host group, execs nothing else), and a file no process of the user's
// could replace ([NotReplaceable]). The error says which part failed.
func CheckPinentry(path string) error {
	switch {
	case !filepath.IsAbs(path):
		return fmt.Errorf("the pinentry program %q is not an absolute path", path)
	case !strings.HasPrefix(filepath.Base(path), "pinentry"):
		return fmt.Errorf("the pinentry program %q is not named pinentry* (only a program whose name starts with \"pinentry\" is started, with the headless group)", path)
	}
	return NotReplaceable(path)
}
