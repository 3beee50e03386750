package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/headless-dev/headless/host/control"
)

// The verbs of issue 44: dialogs, the windows a page opens, forward and reload.

func (c *cmd) forward(fs *flag.FlagSet) run {
	s := sessionFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		return c.page(ctx, func(cl *control.Client) (control.PageResult, error) { return cl.Forward(ctx, *s) })
	}
}

func (c *cmd) reload(fs *flag.FlagSet) run {
	s := sessionFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		return c.page(ctx, func(cl *control.Client) (control.PageResult, error) { return cl.Reload(ctx, *s) })
	}
}

// dialogAccept is 'dialog accept'.
func (c *cmd) dialogAccept(fs *flag.FlagSet) run { return c.dialogAnswer(true)(fs) }

// dialogDismiss is 'dialog dismiss'.
func (c *cmd) dialogDismiss(fs *flag.FlagSet) run { return c.dialogAnswer(false)(fs) }

// dialogAnswer is 'dialog accept' (accept) and 'dialog dismiss'.
func (c *cmd) dialogAnswer(accept bool) func(fs *flag.FlagSet) run {
	return func(fs *flag.FlagSet) run {
		s := sessionFlag(fs)
		var text *string
		if accept {
			text = fs.String("text", "", "a prompt's answer: `TEXT` (your own words, never a secret)")
		}
		return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
			p := control.DialogParams{Session: *s, Accept: accept}
			if text != nil {
				p.Text = *text
			}
			return c.page(ctx, func(cl *control.Client) (control.PageResult, error) { return cl.Dialog(ctx, p) })
		}
	}
}

func (c *cmd) sessionPages(fs *flag.FlagSet) run {
	s := sessionFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		l, err := withHost(ctx, c, func(cl *control.Client) (control.PageList, error) { return cl.Pages(ctx, *s) })
		if err != nil {
			return nil, nil, err
		}
		return l, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "PAGE\tOPENER\tURL\tTITLE (from the page)")
			for _, p := range l.Pages {
				mark, opener := " ", "-"
				if p.Current {
					mark = "*"
				}
				if p.Opener > 0 {
					opener = strconv.Itoa(p.Opener)
				}
				url := p.URL
				if p.Closed {
					url = "(closed)"
				}
				fmt.Fprintf(tw, "%s%d\t%s\t%s\t%q\n", mark, p.Index, opener, url, p.Title)
			}
			tw.Flush()
			for _, p := range l.Pages {
				if p.Dialog != nil {
					fmt.Fprintf(w, "page %d: ", p.Index)
					dialogHuman(w, p.Dialog)
				}
			}
		}, nil
	}
}

func (c *cmd) pageSelect(fs *flag.FlagSet) run {
	s := sessionFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > 1000 {
			return nil, nil, usagef("page select takes a page number from 'headless session pages' (1 is the session's own page)")
		}
		return c.page(ctx, func(cl *control.Client) (control.PageResult, error) {
			return cl.PageSelect(ctx, control.PageSelectParams{Session: *s, Page: n})
		})
	}
}
