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

func (c *cmd) auditPath() (string, error) {
	path, err := c.env.Layout.AuditLog()
	if err != nil {
		return "", wire.Errorf(wire.CodeConfigInvalid, "%w", err)
	}
	return path, nil
}

// recovery is one torn end brokerd cut from the audit log and recorded (a record with op
// "recover"), as 'audit verify' shows it.
type recovery struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Detail string    `json:"detail"`
}

// auditVerify checks the hash chain of brokerd's audit log, and lists the torn ends brokerd
// recovered: a torn end not yet recovered is AUDIT_TORN, an edit AUDIT_TAMPERED.
func (c *cmd) auditVerify(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		path, err := c.auditPath()
		if err != nil {
			return nil, nil, err
		}
		n, err := audit.Verify(path)
		if err != nil {
			if code := wire.CodeOf(err); code == wire.CodeAuditTampered || code == wire.CodeAuditTorn {
				return nil, nil, err // *audit.VerifyError, *audit.TornError
			}
			return nil, nil, wire.Errorf(wire.CodeInternal, "read the audit log: %w", err)
		}
		recs, err := audit.Recoveries(path)
		if err != nil {
			return nil, nil, wire.Errorf(wire.CodeInternal, "read the audit log: %w", err)
		}
		res := struct {
			Intact    bool       `json:"intact"`
			Records   int        `json:"records"`
			Recovered []recovery `json:"recovered"`
		}{true, n, []recovery{}}
		for _, r := range recs {
			res.Recovered = append(res.Recovered, recovery{r.Seq, r.Time, r.Detail})
		}
		return res, func(w io.Writer) {
			fmt.Fprintf(w, "audit log intact: %d records\n", n)
			if len(res.Recovered) > 0 {
				fmt.Fprintf(w, "torn ends recovered by brokerd (records cut short as they were written, by a kill or a power loss): %d\n", len(res.Recovered))
			}
			for _, r := range res.Recovered {
				fmt.Fprintf(w, "  record %d, %s: %s\n", r.Seq, r.Time.Local().Format(time.DateTime), r.Detail)
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
