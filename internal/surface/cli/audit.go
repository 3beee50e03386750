package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

// auditPath is the audit log 'audit list' reads.
func (c *cmd) auditPath() (string, error) {
	path, err := c.env.Layout.AuditLog()
	if err != nil {
		return "", wire.Errorf(wire.CodeConfigInvalid, "%w", err)
	}
	return path, nil
}

// auditVerify checks brokerd's audit log with brokerd's key (Env.VerifyAudit: the installed
// brokerd, believed only with its group from the kernel), and lists the torn ends brokerd
// recovered: an edit, a cut or a deletion is AUDIT_TAMPERED (naming the record and how), a
// torn end not yet recovered AUDIT_TORN, a check no brokerd with its group made
// AUDIT_UNVERIFIED.
func (c *cmd) auditVerify(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		out, err := c.env.VerifyAudit(ctx)
		if err != nil {
			return nil, nil, err
		}
		if out.Failure != nil {
			return nil, nil, out.Failure.Err()
		}
		rep := out.Report
		if rep.Recovered == nil {
			rep.Recovered = []audit.Recovery{}
		}
		if rep.Elsewhere == nil {
			rep.Elsewhere = []audit.Placed{}
		}
		if rep.Decided == nil {
			rep.Decided = []audit.Record{}
		}
		return rep, func(w io.Writer) {
			fmt.Fprintf(w, "audit log intact: %d records, checked with brokerd's key\n", rep.Records)
			switch {
			case rep.Records > 0 && rep.Legacy == rep.Records:
				fmt.Fprintf(w, "all %d were written before brokerd keyed its records, and are checked as the plain hash chain they are (a program of yours could have rewritten them): brokerd keys the log when it next writes to it\n", rep.Legacy)
			case rep.Legacy > 0:
				fmt.Fprintf(w, "records %d-%d were written before brokerd keyed its records: checked as the plain hash chain they were when brokerd keyed the log (what was done to them before cannot be told)\n", rep.First, rep.First+uint64(rep.Legacy)-1)
			}
			if len(rep.Recovered) > 0 {
				fmt.Fprintf(w, "torn ends recovered by brokerd (records cut short as they were written, by a kill or a power loss): %d\n", len(rep.Recovered))
			}
			for _, r := range rep.Recovered {
				fmt.Fprintf(w, "  record %d, %s: %s\n", r.Seq, r.Time.Local().Format(time.DateTime), r.Detail)
			}
			if ro := rep.RotatedOut; ro != nil {
				fmt.Fprintf(w, "records %d-%d (%d) are no longer in the log: rotated out\n", ro.From, ro.To, ro.To-ro.From+1)
			}
			if len(rep.Decided) > 0 {
				fmt.Fprintf(w, "the person's decisions among records the log no longer holds, as brokerd keeps them (the newest %d of each kind): %d\n", audit.MaxDecided, len(rep.Decided))
			}
			for _, r := range rep.Decided {
				fmt.Fprintf(w, "  record %d: %s\n", r.Seq, procstat.Clean(audit.Summary(r), 512))
			}
			if len(rep.Elsewhere) > 0 {
				fmt.Fprintf(w, "warning: decisions of the person's went to other audit logs of yours (a brokerd started with another XDG_DATA_HOME): %d, in %d log(s)\n", len(rep.Elsewhere)+rep.ElsewhereOmitted, rep.ElsewhereLogs)
			}
			if rep.ElsewhereOmitted > 0 {
				fmt.Fprintf(w, "  %d follow, the newest allowed ones first; 'headless audit verify' with that log's XDG_DATA_HOME lists the others\n", len(rep.Elsewhere))
			}
			for _, p := range rep.Elsewhere {
				fmt.Fprintf(w, "  %s, record %d: %s\n", procstat.Clean(p.Log, 256), p.Record.Seq, procstat.Clean(audit.Summary(p.Record), 512))
			}
		}, nil
	}
}

// auditList shows recent decisions for the person reviewing what agents did.
func (c *cmd) auditList(fs *flag.FlagSet) run {
	since := fs.Duration("since", 24*time.Hour, "show records newer than this `DURATION`")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		path, err := c.auditPath()
		if err != nil {
			return nil, nil, err
		}
		recs, err := audit.List(path, time.Now().Add(-*since), 1000)
		if err != nil {
			return nil, nil, wire.Errorf(wire.CodeInternal, "read the audit log: %w", err)
		}
		if recs == nil {
			recs = []audit.Record{}
		}
		res := struct {
			Records []audit.Record `json:"records"`
		}{recs}
		return res, func(w io.Writer) {
			if len(recs) == 0 {
				fmt.Fprintln(w, "no audit records in that period")
				return
			}
			tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tOP\tDECISION\tCODE\tORIGIN\tALIAS\tSESSION\tREQUESTER (and its parents)")
			for _, r := range recs {
				who := procstat.Describe(r.Chain)
				if who == "" {
					who = fmt.Sprintf("pid %d %s", r.PID, r.Exe)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format(time.DateTime), r.Op, r.Decision, r.Code, r.Origin, r.Alias, r.Session, who)
				// What the host reported about a release, labelled as such, under the requester.
				const indent = "\t\t\t\t\t\t\t"
				if r.Purpose != "" {
					fmt.Fprintf(tw, "%s  purpose: %s\n", indent, r.Purpose)
				}
				if len(r.Released) > 0 {
					fmt.Fprintf(tw, "%s  released: %s\n", indent, strings.Join(r.Released, " and "))
				}
				if r.Path != "" || r.Field != "" {
					fmt.Fprintf(tw, "%s  page %q, field %q (as reported by the host)\n", indent, r.Path, r.Field)
				}
				if len(r.Agent) > 0 {
					fmt.Fprintf(tw, "%s  asked by %s (as reported by the host)\n", indent, procstat.Describe(r.Agent))
				}
				if r.Listener != "" {
					fmt.Fprintf(tw, "%s  loopback listener: %s\n", indent, r.Listener)
				}
				if r.Detail != "" {
					fmt.Fprintf(tw, "%s  %s\n", indent, r.Detail)
				}
			}
			tw.Flush()
		}, nil
	}
}
