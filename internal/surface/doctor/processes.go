package doctor

// The checks of the processes: brokerd and the host running, the installed binaries, and the
// kernel boundary (ptrace scope, undumpable).

import (
	"strings"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
)

func (d *run) checkBrokerd() {
	switch {
	case d.brokerPID == 0:
		if l, _ := d.p.Listening(d.p.Layout.BrokerSocket()); l {
			d.set(CheckBrokerd, Healthy, "", "not running; broker.sock is listened on (systemd socket activation starts brokerd at the first request)")
			return
		}
		d.set(CheckBrokerd, Warning, "'headless start' starts it (or enable the systemd user units, README)", "not running")
	case d.broker == nil && d.brokerAns.busy():
		d.set(CheckBrokerd, Warning, "run the doctor again in a while; if it stays busy, brokerd.log in the runtime dir says what it was doing",
			"busy: pid %d holds broker.lock and took the question, but did not answer on broker.sock within %s", d.brokerPID, d.p.Wait)
	case d.broker == nil:
		d.set(CheckBrokerd, Failed, "read brokerd.log in the runtime dir; stop it (kill -TERM PID) and start again",
			"pid %d holds broker.lock but does not answer on broker.sock", d.brokerPID)
	case d.broker.Version != d.p.Version:
		d.set(CheckBrokerd, Warning, "install headless and brokerd from the same build, then restart brokerd",
			"running, pid %d, but version %s, this headless is %s (brokerd refuses a host of another build)", d.broker.PID, procstat.Clean(d.broker.Version, 64), procstat.Clean(d.p.Version, 64))
	default:
		d.set(CheckBrokerd, Healthy, "", "running, pid %d, answers%s; presence %s; started by %s", d.broker.PID, d.brokerAns.slowly(d.p.Slow), provName(d.broker.Presence), procstat.Clean(d.broker.Started, 16))
	}
}

func (d *run) checkHost() {
	switch {
	case !d.hostListening:
		d.set(CheckHost, Warning, "'headless start' starts it", "not running")
	case d.host == nil && d.hostAns.busy() && d.prof.LockPID > 0:
		// The host holds the profile's lock: a host that has not answered yet is a slow
		// one (a loaded machine, a long verb), as the CLI would find it.
		d.set(CheckHost, Warning, "run the doctor again in a while; if it stays busy, host.log in the runtime dir says what it was doing, and 'headless stop' then 'headless start' ends it",
			"busy: pid %d holds the profile and control.sock took the question, but the host did not answer within %s", d.prof.LockPID, d.p.Wait)
	case d.host == nil && d.hostAns.busy():
		d.set(CheckHost, Failed, "read host.log in the runtime dir; 'headless stop' then 'headless start'",
			"something listens on control.sock but did not answer within %s, and no host holds the profile", d.p.Wait)
	case d.host == nil:
		d.set(CheckHost, Failed, "read host.log in the runtime dir; 'headless stop' then 'headless start'", "something listens on control.sock but does not answer as the host")
	default:
		d.set(CheckHost, Healthy, "", "running, pid %d, answers%s; browser pid %d; %d session(s)", d.host.PID, d.hostAns.slowly(d.p.Slow), d.host.BrowserPID, d.host.Sessions)
	}
}

func (d *run) checkBinaries() {
	var facts []hardening.BinaryFact
	if d.broker != nil && len(d.broker.Facts.Binaries) > 0 {
		facts = d.broker.Facts.Binaries // brokerd and the host program it starts
	} else if d.p.Executable != "" {
		facts = append(facts, hardening.Binary(d.p.Executable))
		bd := d.p.Executable[:strings.LastIndexByte(d.p.Executable, '/')+1] + "brokerd"
		if exists(bd) {
			facts = append(facts, hardening.Binary(bd))
		}
	}
	if len(facts) == 0 {
		d.set(CheckBinaries, Warning, "run the installed headless (for example /usr/bin/headless)", "not checked: this binary's path is unknown")
		return
	}
	var writable, fine []string
	for _, f := range facts {
		if f.UserWritable {
			writable = append(writable, f.Path+": "+binaryReason(f.Reason))
		} else {
			fine = append(fine, f.Path)
		}
	}
	if len(writable) > 0 {
		d.set(CheckBinaries, Warning, "as root: scripts/install.sh (or the .deb) installs them root-owned in a directory only root can write; run headless as yourself, not root",
			"replaceable by programs running as you: %s", strings.Join(writable, "; "))
		return
	}
	d.set(CheckBinaries, Healthy, "", "not replaceable by you: %s", strings.Join(fine, ", "))
}

func binaryReason(r string) string {
	switch {
	case strings.HasPrefix(r, "owned by you"):
		return "owned by you"
	case strings.HasPrefix(r, "its directory") && strings.Contains(r, "is yours"):
		return "its directory is yours"
	case strings.Contains(r, "writable by group or others"):
		return "writable by group or others"
	}
	return "cannot be checked"
}

// checkPtrace reports Yama's ptrace_scope for information: trust rests on the set-gid groups
// the kernel grants at any ptrace_scope (checks groups, setgid, seal_key, brokerd_trust), so
// no value is a warning.
func (d *run) checkPtrace() {
	if !d.linux() {
		d.set(CheckPtraceScope, Unsupported, "", "Yama ptrace_scope is a Linux setting")
		return
	}
	scope := "unknown"
	if d.p.PtraceScope != nil {
		scope = d.p.PtraceScope()
	}
	const info = "informational: brokerd and the host are kept from your programs by their groups at any value"
	switch scope {
	case "0", "1", "2", "3":
		d.set(CheckPtraceScope, Healthy, "", "kernel.yama.ptrace_scope = %s (%s)", scope, info)
	case "absent":
		d.set(CheckPtraceScope, Healthy, "", "the kernel has no Yama (%s)", info)
	default:
		d.set(CheckPtraceScope, Healthy, "", "kernel.yama.ptrace_scope cannot be read (%s)", info)
	}
}

func (d *run) checkUndumpable() {
	if !d.linux() {
		d.set(CheckUndumpable, Unsupported, "", "PR_SET_DUMPABLE is a Linux facility")
		return
	}
	var yes, no []string
	if d.broker != nil {
		if d.broker.Facts.Undumpable {
			yes = append(yes, "brokerd")
		} else {
			no = append(no, "brokerd")
		}
	}
	if d.host != nil {
		if d.host.Undumpable {
			yes = append(yes, "host")
		} else {
			no = append(no, "host")
		}
	}
	switch {
	case len(no) > 0:
		d.set(CheckUndumpable, Failed, "run the headless and brokerd of the Debian package (or scripts/build.sh); read their logs",
			"%s is dumpable: a program running as you could read its memory", strings.Join(no, " and "))
	case len(yes) == 0:
		d.set(CheckUndumpable, Warning, "'headless start', then run the doctor again", "not checked: neither brokerd nor the host runs")
	case len(yes) == 1:
		d.set(CheckUndumpable, Healthy, "", "%s is undumpable (the other does not run)", yes[0])
	default:
		d.set(CheckUndumpable, Healthy, "", "brokerd and the host are undumpable")
	}
}
