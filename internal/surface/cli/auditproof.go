package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// maxOutcome bounds brokerd's answer to 'brokerd audit verify --json', which it sends in
// chunks (peercred.SendAllAs): a report lists at most audit.MaxRecoveries recoveries, this
// log's kept decisions (a decided file of at most 1 MiB), and audit.MaxElsewhere of those
// that went to other logs, each cut to a bound: 4 MiB holds them with room.
const maxOutcome = 4 << 20

// verifyWait bounds the whole check: brokerd waits at most 10 s for the writers' lock, and
// checks at most 5 files of 1 MiB.
const verifyWait = 60 * time.Second

// BrokerdAudit returns an Env.VerifyAudit: the audit log of layout checked with brokerd's key.
// It runs 'brokerd audit verify --json' (the brokerd beside this headless, else on PATH) with a
// socket as its stdout, and takes the answer only when the kernel says it came, with its
// credentials (SCM_CREDENTIALS), from that very process, as this user, with brokerd's group
// (headless-broker): the kernel grants that group only to an exec of the root-made set-gid
// brokerd that is not traced, not under no_new_privs and not in a user namespace, which alone
// reads the seal key. So nothing a program of the user runs — a brokerd of its own, one under
// its tracer, a script on broker.sock — can answer for it. Nothing is asked of a running brokerd.
func BrokerdAudit(layout xdg.Layout) func(ctx context.Context) (audit.Outcome, error) {
	return func(ctx context.Context) (audit.Outcome, error) {
		unverified := func(format string, a ...any) (audit.Outcome, error) {
			return audit.Outcome{}, wire.Errorf(wire.CodeAuditUnverified, "the audit log was not checked with brokerd's key: "+format, a...)
		}
		want, err := layout.AuditLog()
		if err != nil {
			return audit.Outcome{}, wire.Errorf(wire.CodeConfigInvalid, "%w", err)
		}
		gid, err := hardening.LookupGroup(hardening.BrokerGroup)
		if err != nil {
			return unverified("%v", err)
		}
		path, err := brokerdPath()
		if err != nil {
			return unverified("brokerd was not found next to headless or on PATH")
		}
		mine, theirs, err := peercred.Pair()
		if err != nil {
			return unverified("%v", err)
		}
		defer mine.Close()
		ctx, cancel := context.WithTimeout(ctx, verifyWait)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, "audit", "verify", "--json")
		cmd.Dir = "/"
		cmd.Stdout = theirs
		var stderr bytes.Buffer
		cmd.Stderr = &boundedWriter{w: &stderr, n: 4 << 10}
		err = cmd.Start()
		theirs.Close()
		if err != nil {
			return unverified("start brokerd: %v", err)
		}
		if d, ok := ctx.Deadline(); ok {
			mine.SetReadDeadline(d)
		}
		b, cred, rerr := peercred.ReceiveAll(mine, maxOutcome)
		werr := cmd.Wait()
		why := firstLine(stderr.String())
		switch {
		case rerr != nil:
			return unverified("brokerd (%s) gave no answer: %v%s", path, rerr, why)
		case cred.PID != cmd.Process.Pid || cred.UID != os.Getuid():
			return unverified("the answer came from pid %d, uid %d, not the brokerd started (pid %d)", cred.PID, cred.UID, cmd.Process.Pid)
		case cred.GID != gid:
			return unverified("the kernel says brokerd (%s) ran with group %d, not %s (%d), so it could not read the seal key: it is not installed set-gid, or this headless runs under a tracer, with no_new_privs or in a user namespace",
				path, cred.GID, hardening.BrokerGroup, gid)
		}
		var out audit.Outcome
		if err := wire.DecodeStrict(b, &out); err != nil {
			return unverified("brokerd's answer: %v", err)
		}
		if out.Report.Path != want {
			return unverified("brokerd checked %s, not %s", procstat.Clean(out.Report.Path, 256), want)
		}
		if (out.Failure == nil) != (werr == nil) {
			return unverified("brokerd's answer and its exit status disagree (%v)", werr)
		}
		return out, nil
	}
}

// boundedWriter keeps the first n bytes written to it.
type boundedWriter struct {
	w *bytes.Buffer
	n int
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if room := b.n - b.w.Len(); room > 0 {
		b.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// firstLine is ": " and the first line of s, or "" when s is empty.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return ""
	}
	return ": " + procstat.Clean(s, 256)
}

// errNoVerifier is Env.VerifyAudit in a world without one.
var errNoVerifier = errors.New("no brokerd to check it with")

func noVerifier(context.Context) (audit.Outcome, error) {
	return audit.Outcome{}, wire.Errorf(wire.CodeAuditUnverified, "the audit log was not checked with brokerd's key: %v", errNoVerifier)
}
