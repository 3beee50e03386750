package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
)

// File is what the doctor reads of a file's inode, without opening it.
type File struct {
	Mode    fs.FileMode // type, permissions and setuid/setgid bits (of a symlink's target)
	UID     int
	GID     int
	Size    int64
	Symlink bool // the path itself is a symbolic link
}

// installHint is the one root step that makes what these checks look at.
const installHint = "as root: scripts/install.sh (or install the .deb); it says what it changes first"

// groups looks up the two system groups once: gid 0 for one that is missing, with why.
func (d *run) groups() (host, broker int, why string) {
	if d.p.LookupGroup == nil {
		return 0, 0, "the group database was not looked at"
	}
	var missing []string
	look := func(name string) int {
		gid, err := d.p.LookupGroup(name)
		var unknown user.UnknownGroupError
		switch {
		case errors.As(err, &unknown):
			missing = append(missing, "the group "+name+" does not exist")
		case err != nil:
			missing = append(missing, "the group "+name+" cannot be looked up (or has gid 0)")
		default:
			return gid
		}
		return 0
	}
	host, broker = look(hardening.HostGroup), look(hardening.BrokerGroup)
	return host, broker, strings.Join(missing, "; ")
}

// checkGroups: brokerd trusts a host by the headless group and reads the seal key by the
// headless-broker group; a user in either lends it to every program of theirs.
func (d *run) checkGroups() {
	host, broker, why := d.groups()
	switch {
	case d.p.LookupGroup == nil:
		d.set(CheckGroups, Warning, "this is a bug of the doctor", "not checked")
		return
	case why != "":
		d.set(CheckGroups, Failed, installHint, "%s: brokerd releases and saves nothing (BROKER_UNTRUSTED)", why)
		return
	}
	if d.p.InGroup == nil {
		d.set(CheckGroups, Warning, "this is a bug of the doctor", "groups exist; your membership was not checked")
		return
	}
	var member, fix []string
	for _, g := range []struct {
		name string
		gid  int
	}{{hardening.HostGroup, host}, {hardening.BrokerGroup, broker}} {
		if d.p.InGroup(g.gid) {
			member = append(member, g.name)
			fix = append(fix, "gpasswd -d $USER "+g.name)
		}
	}
	if len(member) > 0 {
		d.set(CheckGroups, Failed, "as root: "+strings.Join(fix, " && ")+", then log in again",
			"you are a member of %s: every program of yours has the group, so brokerd releases and saves nothing (BROKER_UNTRUSTED)", strings.Join(member, " and "))
		return
	}
	d.set(CheckGroups, Healthy, "", "groups %s (gid %d) and %s (gid %d) exist; you are in neither",
		hardening.HostGroup, host, hardening.BrokerGroup, broker)
}

// checkSetGID: the headless binary root-owned and set-gid to headless (brokerd trusts a host
// only with that group), brokerd beside it root-owned and set-gid to headless-broker (only it
// reads the seal key). brokerd starts the headless beside its own executable, and this
// headless starts the brokerd beside it.
func (d *run) checkSetGID() {
	if d.p.Stat == nil {
		d.set(CheckSetGID, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	if d.p.Executable == "" {
		d.set(CheckSetGID, Warning, "run the installed headless (for example /usr/local/bin/headless)", "not checked: this binary's path is unknown")
		return
	}
	host, broker, why := d.groups()
	if why != "" {
		d.set(CheckSetGID, Warning, "see check groups", "not checked: %s", why)
		return
	}
	dir := filepath.Dir(d.p.Executable)
	var bad []string
	for _, b := range []struct {
		path, group string
		gid         int
	}{{d.p.Executable, hardening.HostGroup, host}, {filepath.Join(dir, "brokerd"), hardening.BrokerGroup, broker}} {
		f, err := d.p.Stat(b.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			bad = append(bad, b.path+" does not exist (brokerd and headless are installed in one directory)")
		case err != nil:
			bad = append(bad, b.path+" cannot be looked at")
		case f.Symlink:
			bad = append(bad, b.path+" is a symlink (brokerd starts the headless beside where it really is)")
		case !f.Mode.IsRegular():
			bad = append(bad, b.path+" is not a regular file")
		case f.UID != 0:
			bad = append(bad, fmt.Sprintf("%s is owned by uid %d, not root", b.path, f.UID))
		case f.Mode&fs.ModeSetgid == 0 || f.GID != b.gid:
			bad = append(bad, fmt.Sprintf("%s is not set-gid to %s (mode %04o, group %d)", b.path, b.group, modeBits(f.Mode), f.GID))
		}
	}
	if len(bad) > 0 {
		d.set(CheckSetGID, Failed, installHint, "%s: brokerd releases and saves nothing, or refuses the host", strings.Join(bad, "; "))
		return
	}
	if d.broker != nil && len(d.broker.Facts.Binaries) > 0 {
		if running := d.broker.Facts.Binaries[0].Path; filepath.Dir(running) != dir {
			d.set(CheckSetGID, Warning, "stop that brokerd (kill -TERM PID), then 'headless start' with this headless",
				"%s and brokerd are installed set-gid, but the running brokerd (pid %d) is %s", d.p.Executable, d.broker.PID, procstat.Clean(running, 256))
			return
		}
	}
	d.set(CheckSetGID, Healthy, "", "%s (set-gid %s) and %s (set-gid %s): root-owned, one directory",
		d.p.Executable, hardening.HostGroup, filepath.Join(dir, "brokerd"), hardening.BrokerGroup)
}

// modeBits is a mode as chmod writes it: permissions with the setuid, setgid and sticky bits.
func modeBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// sealKeyLen is seal.KeyLen: the doctor runs in the agent's binary, which never links the
// seal code (internal/test/archtest); a test keeps the two equal.
const sealKeyLen = 32

// checkSealKey judges the seal key's inode as seal.LoadKey does, and that brokerd's group may
// read it. The doctor cannot read it (it runs without that group), and does not need to.
func (d *run) checkSealKey() {
	if d.p.Stat == nil {
		d.set(CheckSealKey, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	path, dir := hardening.KeyPath, filepath.Dir(hardening.KeyPath)
	_, broker, why := d.groups()
	f, err := d.p.Stat(path)
	unsafe := func(format string, a ...any) {
		d.set(CheckSealKey, Failed, fmt.Sprintf("as root: chown root:%s %s && chmod 0640 %s", hardening.BrokerGroup, path, path),
			"%s %s: brokerd refuses it and releases and saves nothing", path, fmt.Sprintf(format, a...))
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.set(CheckSealKey, Failed, installHint, "%s does not exist: brokerd releases and saves nothing (BROKER_UNTRUSTED)", path)
		return
	case err != nil:
		d.set(CheckSealKey, Warning, "look at it as root: stat "+path, "%s cannot be looked at", path)
		return
	case f.Symlink:
		d.set(CheckSealKey, Failed, "as root: put the key file itself in its place (brokerd opens it without following a symlink)", "%s is a symlink: brokerd refuses it", path)
		return
	case !f.Mode.IsRegular():
		unsafe("is not a regular file")
		return
	case f.UID != 0:
		unsafe("is owned by uid %d, not root", f.UID)
		return
	case modeBits(f.Mode)&0o7137 != 0:
		unsafe("has mode %04o (0640 expected: root writes, its group reads, nobody else)", modeBits(f.Mode))
		return
	case why != "":
		d.set(CheckSealKey, Failed, "see check groups", "%s: not judged: %s", path, why)
		return
	case f.GID != broker:
		unsafe("has group %d, not %s (%d): brokerd cannot read it", f.GID, hardening.BrokerGroup, broker)
		return
	case f.Mode.Perm()&0o040 == 0:
		unsafe("has mode %04o: its group (brokerd) may not read it", modeBits(f.Mode))
		return
	case f.Size != sealKeyLen:
		d.set(CheckSealKey, Failed, "never replace the key in place (every saved credential is sealed with it): as root, restore it from a backup",
			"%s holds %d bytes, %d expected: brokerd refuses it", path, f.Size, sealKeyLen)
		return
	}
	df, err := d.p.Stat(dir)
	switch {
	case err != nil:
		d.set(CheckSealKey, Failed, "as root: install -d -o root -g root -m 0755 "+dir, "%s cannot be looked at: brokerd refuses the key", dir)
	case !df.Mode.IsDir() || df.UID != 0 || df.Mode.Perm()&0o022 != 0:
		d.set(CheckSealKey, Failed, "as root: chown root:root "+dir+" && chmod 0755 "+dir,
			"%s (mode %04o, uid %d) is not a directory only root can write: brokerd refuses the key", dir, modeBits(df.Mode), df.UID)
	default:
		d.set(CheckSealKey, Healthy, "", "%s: root:%s, mode %04o, %d bytes, in a directory only root can write", path, hardening.BrokerGroup, modeBits(f.Mode), f.Size)
	}
}

// checkStateDir judges brokerd's state directory as hardening.CheckStateDir does: root's, of
// brokerd's group, sticky, nothing for others (the known sign-in paths live in it, out of the
// reach of every program of the user).
func (d *run) checkStateDir() {
	if d.p.Stat == nil {
		d.set(CheckStateDir, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	dir := hardening.StateDir
	_, broker, why := d.groups()
	f, err := d.p.Stat(dir)
	fix := fmt.Sprintf("as root: chown root:%s %s && chmod 1770 %s", hardening.BrokerGroup, dir, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.set(CheckStateDir, Failed, installHint, "%s does not exist: brokerd releases and saves nothing (BROKER_UNTRUSTED)", dir)
	case err != nil:
		d.set(CheckStateDir, Warning, "look at it as root: stat "+dir, "%s cannot be looked at", dir)
	case f.Symlink || !f.Mode.IsDir():
		d.set(CheckStateDir, Failed, installHint, "%s is not a directory (a symlink or another file): brokerd refuses it", dir)
	case f.UID != 0:
		d.set(CheckStateDir, Failed, fix, "%s is owned by uid %d, not root: brokerd refuses it", dir, f.UID)
	case why != "":
		d.set(CheckStateDir, Failed, "see check groups", "%s: not judged: %s", dir, why)
	case f.GID != broker:
		d.set(CheckStateDir, Failed, fix, "%s has group %d, not %s (%d): brokerd refuses it", dir, f.GID, hardening.BrokerGroup, broker)
	case f.Mode.Perm()&0o007 != 0 || f.Mode&fs.ModeSticky == 0:
		d.set(CheckStateDir, Failed, fix, "%s has mode %04o, not 1770 (sticky, nothing for others): brokerd refuses it", dir, modeBits(f.Mode))
	default:
		d.set(CheckStateDir, Healthy, "", "%s: root:%s, mode %04o: no program of yours can reach brokerd's state (the known sign-in paths)", dir, hardening.BrokerGroup, modeBits(f.Mode))
	}
}

// checkBrokerTrust reports whether the running brokerd has the seal key: only a brokerd the
// kernel gave its group reads it, and one without it releases and saves nothing.
func (d *run) checkBrokerTrust() {
	switch {
	case d.brokerPID == 0:
		d.set(CheckBrokerTrust, Warning, "'headless start', then run the doctor again", "not checked: brokerd does not run")
	case d.broker == nil:
		d.set(CheckBrokerTrust, Warning, "see check brokerd", "not checked: brokerd does not answer")
	case d.broker.Untrusted != "":
		why, hint := untrustedReason(d.broker.Untrusted)
		d.set(CheckBrokerTrust, Failed, hint, "brokerd (pid %d) releases and saves nothing (BROKER_UNTRUSTED): %s", d.broker.PID, why)
	default:
		d.set(CheckBrokerTrust, Healthy, "", "brokerd (pid %d) has the seal key: it may release and save", d.broker.PID)
	}
}

// untrustedReason puts brokerd's reason (cmd/brokerd's trust) into the doctor's words.
func untrustedReason(msg string) (why, hint string) {
	restart := "; then stop brokerd (kill -TERM PID) and 'headless start'"
	for _, k := range []struct{ has, why, hint string }{
		{"did not give this brokerd its group", "the kernel did not give it its group " + hardening.BrokerGroup + ": not installed set-gid, or started under a tracer, in a user namespace or with no_new_privs",
			"run the installed brokerd, not under a debugger or sandbox (see checks setgid and systemd_unit)"},
		{"member of the seal key's group", "you are a member of " + hardening.BrokerGroup, "see check groups"},
		{"member of the " + hardening.HostGroup + " group", "you are a member of " + hardening.HostGroup, "see check groups"},
		{"runs with group", "it runs with another group than the seal key's", "see checks setgid and seal_key"},
		{"does not exist", "the seal key does not exist", "see check seal_key"},
		{"unsafe", "the seal key file is refused (owner, mode, size or directory)", "see check seal_key"},
		{"group " + hardening.HostGroup, "the group " + hardening.HostGroup + " cannot be used", "see check groups"},
		{hardening.StateDir, "its state directory " + hardening.StateDir + " cannot be used", "see check state_dir"},
		{"seal key", "the seal key cannot be read", "see check seal_key"},
	} {
		if strings.Contains(msg, k.has) {
			return k.why, k.hint + restart
		}
	}
	return "a reason this doctor does not know", "read brokerd.log in the runtime dir" + restart
}

// checkSandbox: for a user other than root, the host runs Chromium with
// --disable-namespace-sandbox, so Chromium needs its setuid sandbox (Debian's chromium-sandbox)
// beside it, or it does not start. As root Chromium runs with --no-sandbox.
func (d *run) checkSandbox() {
	switch {
	case !d.linux():
		d.set(CheckSandbox, Unsupported, "", "the browser host runs Debian Chromium on Linux only")
		return
	case d.cfgErr != nil:
		d.set(CheckSandbox, Warning, "fix the config first (check config)", "not checked: the config is refused")
		return
	case d.p.Stat == nil:
		d.set(CheckSandbox, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	path := filepath.Join(filepath.Dir(d.cfg.ChromiumPath()), "chrome-sandbox")
	f, err := d.p.Stat(path)
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "does not exist"
	case err != nil:
		why = "cannot be looked at"
	case !f.Mode.IsRegular():
		why = "is not a regular file"
	case f.UID != 0:
		why = fmt.Sprintf("is owned by uid %d, not root", f.UID)
	case f.Mode&fs.ModeSetuid == 0:
		why = fmt.Sprintf("is not setuid (mode %04o, 4755 expected)", modeBits(f.Mode))
	case f.Mode.Perm()&0o022 != 0:
		why = fmt.Sprintf("is writable by group or others (mode %04o)", modeBits(f.Mode))
	case f.Mode.Perm()&0o001 == 0:
		why = fmt.Sprintf("may not be run by others (mode %04o, 4755 expected)", modeBits(f.Mode))
	}
	hint := "as root: apt-get install chromium-sandbox (it installs " + path + " root-owned, mode 4755)"
	switch {
	case why == "" && d.p.Root:
		d.set(CheckSandbox, Healthy, "", "%s: root-owned, setuid (as root Chromium runs with --no-sandbox and does not use it)", path)
	case why == "":
		d.set(CheckSandbox, Healthy, "", "%s: root-owned, setuid, mode %04o", path, modeBits(f.Mode))
	case d.p.Root:
		d.set(CheckSandbox, Warning, hint, "%s %s: as root Chromium runs with --no-sandbox; as any other user it would not start", path, why)
	default:
		d.set(CheckSandbox, Failed, hint, "%s %s: the host runs Chromium without the user-namespace sandbox, so Chromium cannot start", path, why)
	}
}
