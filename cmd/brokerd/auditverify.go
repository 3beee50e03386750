package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// verifyLockWait bounds the wait for the audit log's writers' lock: an append holds it for one
// write and two fsyncs.
const verifyLockWait = 10 * time.Second

// auditUsage is the help of 'brokerd audit'.
const auditUsage = `usage: brokerd audit verify [--json]

Checks the audit log of the data dir ($XDG_DATA_HOME/headless/audit.jsonl) with the user's
audit key and brokerd's anchors, and writes nothing. 'headless audit verify' runs it and
believes it only when the kernel says it has brokerd's group.

Exit status: 0 when the log is intact; 1 when it is not, or could not be checked; 2 on a
usage error.
`

// auditCommand is 'brokerd audit …': its one command, verify, or its help.
func auditCommand(args []string, stdout, stderr io.Writer, layout xdg.Layout) int {
	switch {
	case len(args) > 0 && args[0] == "verify":
		return auditVerify(args[1:], stdout, stderr, layout)
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(stdout, auditUsage)
		return 0
	}
	fmt.Fprintf(stderr, "brokerd: error: usage: brokerd audit verify [--json]\nhint: run 'brokerd audit --help'\n")
	return 2
}

// auditVerify is 'brokerd audit verify [--json]': it checks the audit log of the data dir with
// the user's audit key and brokerd's anchors, and writes nothing. With --json it prints an
// audit.Outcome; when its stdout is a socket it sends it as messages that each carry its
// credentials (peercred.SendAllAs), so that the CLI, which runs it, learns from the kernel that
// this brokerd has its group — and so the key — before it takes a word of it.
func auditVerify(args []string, stdout, stderr io.Writer, layout xdg.Layout) int {
	fs := flag.NewFlagSet("brokerd audit verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print the outcome as JSON")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, auditUsage)
		return 0
	} else if err != nil || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "brokerd: error: usage: brokerd audit verify [--json]\nhint: run 'brokerd audit --help'\n")
		return 2
	}
	rep, err := verifyLog(layout)
	out := audit.Outcome{Report: rep, Failure: audit.Fail(err)}
	if !*asJSON {
		if err != nil {
			fmt.Fprintf(stderr, "brokerd: error: audit log: %s\nhint: %s\n", out.Failure.Message, out.Failure.Hint)
			return 1
		}
		fmt.Fprintf(stdout, "audit log intact: %d records (%d written before records were keyed)\n", rep.Records, rep.Legacy)
		for _, r := range rep.Recovered {
			fmt.Fprintf(stdout, "  torn end recovered, record %d: %s\n", r.Seq, r.Detail)
		}
		if ro := rep.RotatedOut; ro != nil {
			fmt.Fprintf(stdout, "records %d-%d rotated out\n", ro.From, ro.To)
		}
		for _, r := range rep.Decided {
			fmt.Fprintf(stdout, "  the person's decision, no longer in the log, record %d: %s\n", r.Seq, audit.Summary(r))
		}
		for _, p := range rep.Elsewhere {
			fmt.Fprintf(stdout, "  in another audit log, %s, record %d: %s\n", p.Log, p.Record.Seq, audit.Summary(p.Record))
		}
		return 0
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		fmt.Fprintf(stderr, "brokerd: error: %v\n", merr)
		return 1
	}
	if f, ok := stdout.(*os.File); ok && peercred.IsSocket(f) {
		if err := peercred.SendAllAs(f, b); err != nil {
			fmt.Fprintf(stderr, "brokerd: error: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprintf(stdout, "%s\n", b)
	}
	if err != nil {
		return 1
	}
	return 0
}

// verifyLog checks the log of layout's data dir with the key and the anchors, holding the
// writers' lock (when the log has one) so that no append is seen half done.
func verifyLog(layout xdg.Layout) (audit.Report, error) {
	path, err := layout.AuditLog()
	if err != nil {
		return audit.Report{}, wire.Errorf(wire.CodeConfigInvalid, "%w", err)
	}
	rep := audit.Report{Path: path, Recovered: []audit.Recovery{}, Decided: []audit.Record{}, Elsewhere: []audit.Placed{}}
	key, _, untrusted := trust()
	if untrusted != "" {
		return rep, wire.Errorf(wire.CodeAuditUnverified, "brokerd cannot check the audit log with its key: %s", untrusted)
	}
	defer key.Zero()
	akey := seal.AuditKey(key, layout.UID)
	defer clear(akey)
	gid, err := hardening.LookupGroup(hardening.BrokerGroup)
	if err == nil {
		err = hardening.CheckStateDir(hardening.StateDir, gid)
	}
	var anchors *auditwriter.Anchors
	if err == nil {
		anchors, err = auditwriter.ReadAnchors(hardening.StateDir, layout.UID)
	}
	if err != nil {
		return rep, wire.Errorf(wire.CodeAuditUnverified, "brokerd cannot read its anchors of the audit log: %v", err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		unlock, err := lockfile.WaitExisting(filepath.Join(dir, "audit.lock"), verifyLockWait)
		var held *lockfile.HeldError
		switch {
		case errors.As(err, &held):
			return rep, wire.Errorf(wire.CodeAuditUnverified, "the audit log's writers' lock (%s) is held by another process for over %v", held.Path, verifyLockWait).
				WithHint("brokerd holds that lock for one append at a time; a process that holds it longer (fuser names it) is stuck or keeps the log from being checked: stop it and run 'headless audit verify' again (nothing was checked)")
		case err == nil:
			defer unlock()
		case !errors.Is(err, fs.ErrNotExist):
			return rep, wire.Errorf(wire.CodeAuditUnverified, "%v", err)
		}
	}
	return auditwriter.Check(path, akey, anchors)
}

// unaudited is the audit log of a brokerd without its key (BROKER_UNTRUSTED): it keeps no
// record, since it releases and saves nothing and what it wrote could be anyone's; its
// refusals are in brokerd.log.
type unaudited struct{ log *slog.Logger }

func (u unaudited) Append(r auditwriter.Record) error {
	u.log.Warn("not audited: this brokerd has no key", "op", r.Op, "decision", r.Decision, "code", r.Code, "alias", r.Alias, "pid", r.PID)
	return nil
}
