package doctor

// The checks of the user's files: the config, the runtime dir and its sockets, the profile, the
// audit log.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

func (d *run) checkConfig() {
	if d.cfgPath == "" {
		d.set(CheckConfig, Failed, "set HOME or XDG_CONFIG_HOME to an absolute directory", "the config file's place cannot be resolved")
		return
	}
	fi, err := os.Lstat(d.cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if d.cfgErr != nil {
			d.set(CheckConfig, Failed, "fix the config directory: owned by you, not group/world-writable", "%s: its directory is refused", d.cfgPath)
			return
		}
		d.set(CheckConfig, Healthy, "", "%s does not exist: defaults apply", d.cfgPath)
		return
	case err != nil:
		d.set(CheckConfig, Failed, "check the config file's permissions", "%s cannot be looked at", d.cfgPath)
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	hint := "make it a regular file owned by you with mode 0600 (chmod 600)"
	switch {
	case !fi.Mode().IsRegular():
		d.set(CheckConfig, Failed, hint, "%s is not a regular file", d.cfgPath)
	case st != nil && int(st.Uid) != os.Getuid():
		d.set(CheckConfig, Failed, hint, "%s is owned by uid %d, not you: refused", d.cfgPath, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		d.set(CheckConfig, Failed, hint, "%s is writable by group or others (mode %04o): refused", d.cfgPath, fi.Mode().Perm())
	case d.cfgErr != nil:
		d.set(CheckConfig, Failed, "fix it: documented keys only, valid values ('headless help' names the keys; brokerd's log says which one)",
			"%s is refused: %s", d.cfgPath, classifyConfig(d.cfgErr))
	case fi.Mode().Perm()&0o077 != 0:
		d.set(CheckConfig, Warning, hint, "%s is valid but readable by others (mode %04o); 0600 expected", d.cfgPath, fi.Mode().Perm())
	default:
		d.set(CheckConfig, Healthy, "", "%s: yours, mode %04o, valid", d.cfgPath, fi.Mode().Perm())
	}
}

func classifyConfig(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, config.ErrInsecure):
		return "insecure (owner or mode)"
	case strings.Contains(msg, "unknown"):
		return "an unknown key"
	case strings.Contains(msg, "program"):
		return "the pinentry program is missing or unsafe"
	}
	return "malformed or out-of-range value"
}

func (d *run) checkRuntime() {
	dir := d.p.Layout.Runtime
	fi, err := os.Lstat(dir)
	hint := "remove it and let headless recreate it (brokerd makes it 0700)"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.set(CheckRuntimeDir, Healthy, "", "%s does not exist yet (created 0700 at the first start)", dir)
		return
	case err != nil:
		d.set(CheckRuntimeDir, Failed, hint, "%s cannot be looked at", dir)
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		d.set(CheckRuntimeDir, Failed, hint, "%s is not a directory (or is a symlink): refused", dir)
	case st != nil && int(st.Uid) != d.p.Layout.UID:
		d.set(CheckRuntimeDir, Failed, hint, "%s is owned by uid %d, not you: refused", dir, st.Uid)
	case fi.Mode().Perm() != 0o700:
		d.set(CheckRuntimeDir, Warning, "chmod 700 it (brokerd tightens it at its next start)", "%s has mode %04o, 0700 expected", dir, fi.Mode().Perm())
	default:
		d.set(CheckRuntimeDir, Healthy, "", "%s: yours, mode 0700", dir)
	}
}

func (d *run) checkSockets() {
	var bad, warn, ok []string
	for _, s := range []struct{ name, path string }{
		{"broker.sock", d.p.Layout.BrokerSocket()},
		{"control.sock", d.p.Layout.ControlSocket()},
	} {
		fi, err := os.Lstat(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			bad = append(bad, s.name+" cannot be looked at")
			continue
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode().Type() != fs.ModeSocket:
			bad = append(bad, s.name+" is not a socket (brokerd and the host refuse to remove it)")
			continue
		case st != nil && int(st.Uid) != d.p.Layout.UID:
			bad = append(bad, fmt.Sprintf("%s is owned by uid %d", s.name, st.Uid))
			continue
		case fi.Mode().Perm()&0o077 != 0:
			bad = append(bad, fmt.Sprintf("%s has mode %04o, 0600 expected", s.name, fi.Mode().Perm()))
			continue
		}
		listening, err := d.p.Listening(s.path)
		switch {
		case err != nil:
			ok = append(ok, s.name+" (mode 0600; liveness unknown)")
		case listening:
			ok = append(ok, s.name+" (0600, listening)")
		default:
			warn = append(warn, s.name+" is stale: nothing listens on it (left in place; the next start replaces it)")
		}
	}
	switch {
	case len(bad) > 0:
		d.set(CheckSockets, Failed, "stop headless, remove the file named, and start again", "%s", strings.Join(append(bad, warn...), "; "))
	case len(warn) > 0:
		d.set(CheckSockets, Warning, "nothing to do: 'headless start' replaces a stale socket after probing it", "%s", strings.Join(append(warn, ok...), "; "))
	case len(ok) == 0:
		d.set(CheckSockets, Healthy, "", "no sockets (nothing runs)")
	default:
		d.set(CheckSockets, Healthy, "", "%s", strings.Join(ok, "; "))
	}
}

func (d *run) checkProfile() {
	if !d.linux() {
		d.set(CheckProfile, Unsupported, "", "the browser host runs on Linux only")
		return
	}
	if d.profNil {
		d.set(CheckProfile, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	f, err := d.prof, d.profErr
	switch {
	case err != nil:
		d.set(CheckProfile, Failed, "set HOME or XDG_DATA_HOME to an absolute directory", "the profile's place cannot be resolved")
		return
	case !f.Exists:
		d.set(CheckProfile, Healthy, "", "%s does not exist yet (created at the first start)", f.Path)
		return
	}
	owner := "not in use"
	if f.LockPID > 0 {
		owner = fmt.Sprintf("locked by pid %d", f.LockPID)
		if d.host != nil && d.host.PID == f.LockPID {
			owner += " (the running host)"
		}
	}
	switch {
	case strings.Contains(f.Problem, "newer than this headless"):
		d.set(CheckProfile, Failed, "upgrade headless", "%s was made by a newer headless: the host refuses it; %s", f.Path, owner)
	case f.Problem != "":
		kind, _, _ := strings.Cut(f.Problem, ":")
		d.set(CheckProfile, Warning, "nothing is deleted: the next start moves it aside as profile.corrupt-* and makes a fresh one (cookies are lost, credentials kept)",
			"%s fails the check (%s): the next start moves it aside; %s", f.Path, procstat.Clean(kind, 32), owner)
	case f.LockPID > 0 && d.host != nil && d.host.PID != f.LockPID:
		d.set(CheckProfile, Warning, "stop the other owner, or use an isolated session", "%s: marker pinned to the Secret Service; %s, not the host that answers", f.Path, owner)
	default:
		d.set(CheckProfile, Healthy, "", "%s: marker pinned to the Secret Service (gnome-libsecret); %s", f.Path, owner)
	}
}

// checkAudit asks the installed brokerd to check the audit log with its key (Probes.AuditVerify,
// which believes the answer only with brokerd's group from the kernel): what 'headless audit
// verify' says, check by check.
func (d *run) checkAudit() {
	path, err := d.p.Layout.AuditLog()
	if err != nil {
		d.set(CheckAudit, Failed, "set HOME or XDG_DATA_HOME to an absolute directory", "the audit log's place cannot be resolved")
		return
	}
	if d.p.AuditVerify == nil {
		d.set(CheckAudit, Warning, "run 'headless audit verify'", "%s: not checked with brokerd's key", path)
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, auditWait)
	out, err := d.p.AuditVerify(ctx)
	cancel()
	if err == nil && out.Failure != nil {
		err = out.Failure.Err()
	}
	rep := out.Report
	switch code := wire.CodeOf(err); {
	case err == nil && rep.Records > 0 && rep.Legacy == rep.Records:
		d.set(CheckAudit, Healthy, "", "%s: %d records written before brokerd keyed its records, their hash chain intact (brokerd keys the log when it next writes)", path, rep.Records)
	case err == nil && len(rep.Elsewhere) > 0:
		// Not a door left open (each of those logs is keyed and anchored too), but where to
		// look: a brokerd was started with another XDG_DATA_HOME.
		d.set(CheckAudit, Healthy, "", "%s: %d records, checked with brokerd's key and anchor; %d decision(s) of the person's went to other audit logs, %d of them ('headless audit verify' names them)",
			path, rep.Records, len(rep.Elsewhere)+rep.ElsewhereOmitted, rep.ElsewhereLogs)
	case err == nil:
		d.set(CheckAudit, Healthy, "", "%s: %d records, checked with brokerd's key and anchor (%d written before keying)", path, rep.Records, rep.Legacy)
	case code == wire.CodeAuditTampered:
		seq, kind := out.Failure.Seq, out.Failure.Kind
		d.set(CheckAudit, Failed, "keep a copy of the audit.jsonl files and read 'headless audit verify': a program of yours changed the log (SECURITY.md, the audit log)",
			"%s is not as brokerd wrote it: record %d: %s", path, seq, procstat.Clean(string(kind), 16))
	case code == wire.CodeAuditTorn:
		d.set(CheckAudit, Warning, "brokerd keeps the cut bytes and records the cut when it next starts; 'headless audit verify' lists it",
			"%s ends in a record cut short as it was written (record %d); the records before it verify", path, out.Failure.Seq)
	case code == wire.CodeAuditUnverified:
		d.set(CheckAudit, Warning, "see checks setgid, seal_key and state_dir; 'headless audit verify' says why",
			"%s: not checked: no brokerd with its group (%s) answered", path, hardening.BrokerGroup)
	default:
		d.set(CheckAudit, Failed, "run 'headless audit verify' for the reason", "%s: brokerd could not check it (%s)", path, procstat.Clean(string(code), 32))
	}
}

// auditWait bounds the check of the audit log (brokerd waits up to 10 s for the writers' lock).
const auditWait = 20 * time.Second
