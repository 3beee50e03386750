package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/host/control"
)

func sessionFlag(fs *flag.FlagSet) *string {
	return fs.String("session", host.DefaultSession, "session name")
}

func (c *cmd) sessionCmd(ctx context.Context, sub string, args []string) int {
	switch sub {
	case "create":
		return c.run(ctx, "session create", args, func(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
			iso := fs.Bool("isolated", false, "own cookies and storage")
			name, rest := positional(args)
			if err := parse(fs, rest, nil); err != nil {
				return nil, nil, err
			}
			if name == "" {
				return nil, nil, &usageError{"session create needs a NAME"}
			}
			var info host.SessionInfo
			if err := c.call(ctx, control.MethodSessionCreate, host.CreateParams{Name: name, Isolated: *iso}, &info); err != nil {
				return nil, nil, err
			}
			return info, func(w io.Writer) {
				kind := "session"
				if info.Isolated {
					kind = "isolated session"
				}
				fmt.Fprintf(w, "created %s %s\n", kind, info.Name)
			}, nil
		})
	case "list":
		return c.run(ctx, "session list", args, func(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
			if err := parse(fs, args, nil); err != nil {
				return nil, nil, err
			}
			var l host.SessionList
			if err := c.call(ctx, control.MethodSessionList, nil, &l); err != nil {
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
		})
	case "close":
		return c.run(ctx, "session close", args, func(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
			name, rest := positional(args)
			if err := parse(fs, rest, nil); err != nil {
				return nil, nil, err
			}
			if name == "" {
				return nil, nil, &usageError{"session close needs a NAME"}
			}
			var r struct {
				Closed string `json:"closed"`
			}
			if err := c.call(ctx, control.MethodSessionClose, host.CreateParams{Name: name}, &r); err != nil {
				return nil, nil, err
			}
			return r, func(w io.Writer) { fmt.Fprintf(w, "closed session %s\n", name) }, nil
		})
	}
	return c.usageErr(hasJSON(args), "session needs a subcommand: create, list or close")
}

// positional splits off the first non-flag argument (flags may come before or after it).
func positional(args []string) (string, []string) {
	for i, a := range args {
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], append(append([]string(nil), args[:i]...), args[i+2:]...)
			}
			return "", args[:i]
		}
		if !strings.HasPrefix(a, "-") {
			// the value of a preceding flag that takes one?
			if i > 0 && (args[i-1] == "--session" || args[i-1] == "-session" || args[i-1] == "--timeout" || args[i-1] == "--text" || args[i-1] == "--url") {
				continue
			}
			return a, append(append([]string(nil), args[:i]...), args[i+1:]...)
		}
	}
	return "", args
}
