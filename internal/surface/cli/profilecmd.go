package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// confirm asks a yes/no question on the controlling terminal (never stdin: a "y" piped in by
// whoever runs the command does not count). Only "y" or "yes" is yes. Without a terminal it
// returns noTTY.
func (c *cmd) confirm(prompt string, noTTY *wire.Error) (bool, error) {
	tty, err := c.env.OpenTTY()
	if err != nil {
		e := *noTTY
		e.Message = fmt.Sprintf("%s (%v)", e.Message, err)
		return false, &e
	}
	defer tty.Close()
	ans, err := tty.Line(prompt, 16)
	if err != nil {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(ans))
	return a == "y" || a == "yes", nil
}

const clearPrompt = "Clear the browser profile (cookies, storage, cache)? Saved credentials are kept. [y/N] "

// profileClear clears the durable profile: through the running host (which closes every
// session, Chromium, clears, relaunches and recreates the default session), or, when no host
// runs, with the host's own code under the profile lock (host.ClearStopped).
func (c *cmd) profileClear(fs *flag.FlagSet) run {
	yes := fs.Bool("yes", false, "clear without asking")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if !*yes {
			ok, err := c.confirm(clearPrompt, &wire.Error{
				Code:    wire.CodeNoTTY,
				Message: "clearing the browser profile needs confirmation on the controlling terminal",
				Hint:    "run it from a terminal to be asked, or pass --yes to clear without asking",
			})
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, wire.Errorf(wire.CodeCancelled, "the profile was not cleared")
			}
		}
		var res control.ClearResult
		running := false
		if cl, err := c.control(ctx); err == nil {
			running = true
			res, err = cl.ProfileClear(ctx)
			cl.Close()
			if err != nil {
				return nil, nil, err
			}
		} else {
			// The clear is audited in brokerd's log: one brokerd cannot record (no brokerd,
			// the audit log full) is refused before anything is removed.
			b, err := c.env.Broker(ctx)
			if err != nil {
				return nil, nil, fmt.Errorf("the clear must be recorded in brokerd's audit log; nothing was cleared: %w", err)
			}
			defer b.Close()
			if err := b.ProfileClearing(ctx); err != nil {
				return nil, nil, err
			}
			if res, err = c.env.ClearStopped(c.env.Layout); err != nil {
				return nil, nil, err
			}
			if err := b.ProfileCleared(ctx, 0); err != nil {
				fmt.Fprintf(c.env.Stderr, "headless: warning: brokerd did not record the clear in the audit log: %v\n", err)
			}
		}
		return res, func(w io.Writer) {
			if running {
				fmt.Fprintf(w, "cleared the browser profile %s: %d session(s) closed, the default session is fresh\n", res.Profile, res.SessionsClosed)
			} else {
				fmt.Fprintf(w, "cleared the browser profile %s (the host was not running)\n", res.Profile)
			}
			fmt.Fprintln(w, "saved credentials were kept")
		}, nil
	}
}

// migrationHuman prints what happened to profiles of older layouts.
func migrationHuman(w io.Writer, from string, kept []control.LegacyProfile) {
	if from != "" {
		fmt.Fprintf(w, "note: the profile of an older layout at %s was moved here\n", from)
	}
	for _, l := range kept {
		fmt.Fprintf(w, "warning: a profile of an older layout was left at %s (%s: %s)\n", l.Path, l.Reason, l.Detail)
	}
}
