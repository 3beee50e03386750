package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/headless-dev/headless/host/control"
)

func (c *cmd) sessionCreate(fs *flag.FlagSet) run {
	iso := fs.Bool("isolated", false, "its own cookies, storage and credential store")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		info, err := withHost(ctx, c, func(cl *control.Client) (control.SessionInfo, error) {
			return cl.SessionCreate(ctx, control.CreateParams{Name: args[0], Isolated: *iso})
		})
		if err != nil {
			return nil, nil, err
		}
		return info, func(w io.Writer) {
			kind := "session"
			if info.Isolated {
				kind = "isolated session"
			}
			fmt.Fprintf(w, "created %s %s\n", kind, info.Name)
		}, nil
	}
}

func (c *cmd) sessionList(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		l, err := withHost(ctx, c, func(cl *control.Client) (control.SessionList, error) { return cl.Sessions(ctx) })
		if err != nil {
			return nil, nil, err
		}
		return l, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tISOLATED\tSTATUS\tURL\tTITLE (from the page)")
			for _, s := range l.Sessions {
				status := "ready"
				if !s.Responsive {
					status = "unresponsive"
				}
				fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%q\n", s.Name, s.Isolated, status, s.URL, s.Title)
			}
			tw.Flush()
		}, nil
	}
}

func (c *cmd) sessionClose(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		r, err := withHost(ctx, c, func(cl *control.Client) (control.SessionClosed, error) { return cl.SessionClose(ctx, args[0]) })
		if err != nil {
			return nil, nil, err
		}
		return r, func(w io.Writer) { fmt.Fprintf(w, "closed session %s\n", r.Closed) }, nil
	}
}
