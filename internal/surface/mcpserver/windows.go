package mcpserver

import (
	"context"
	"fmt"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
)

type dialogIn struct {
	sessionIn
	Accept bool   `json:"accept,omitempty" jsonschema:"else dismiss"`
	Text   string `json:"text,omitempty" jsonschema:"a prompt's answer"`
}

type pagesIn struct {
	sessionIn
	Select int `json:"select,omitempty" jsonschema:"make this page current"`
}

// registerWindows registers the tools of issue 44: dialog, which answers the page's open
// dialog, and pages, which lists (and selects) the windows the session's pages opened.
func (s *Server) registerWindows() {
	addTool(s, "dialog", "Answer dialog", "Accept or dismiss the page's open dialog (results show it; dismissed after 20 s).",
		pageAction, func(ctx context.Context, c *call, in dialogIn) (control.PageResult, string, error) {
			return page(ctx, c, func(cl *control.Client) (control.PageResult, error) {
				return cl.Dialog(ctx, control.DialogParams{Session: in.Session, Accept: in.Accept, Text: in.Text})
			})
		})
	addTool(s, "pages", "Pages", "The session's pages and the windows they opened (untrusted); select makes one current.",
		hints{idempotent: true}, func(ctx context.Context, c *call, in pagesIn) (control.PageList, string, error) {
			cl, err := c.client(ctx)
			if err != nil {
				return control.PageList{}, "", err
			}
			if in.Select != 0 {
				if _, err := cl.PageSelect(ctx, control.PageSelectParams{Session: in.Session, Page: in.Select}); err != nil {
					return control.PageList{}, "", err
				}
			}
			l, err := cl.Pages(ctx, in.Session)
			if err != nil {
				return l, "", err
			}
			text := fmt.Sprintf("%d page(s); the URLs and titles are untrusted page content", len(l.Pages))
			for _, p := range l.Pages {
				mark := ""
				if p.Current {
					mark = " (current)"
				}
				text += fmt.Sprintf("\n%d%s %s %s%s", p.Index, mark, p.URL, quote(clip.Text(p.Title, 120)), dialogSummary(p.Dialog))
			}
			return l, text, nil
		})
}

// dialogSummary is a result's line about a dialog of the page ("" when none).
func dialogSummary(d *control.Dialog) string {
	switch {
	case d == nil:
		return ""
	case d.Open:
		return fmt.Sprintf("; a %s dialog is open (untrusted page text: %s): answer it with dialog", d.Type, quote(d.Message))
	}
	return fmt.Sprintf("; a %s dialog (untrusted page text: %s) was dismissed: %s", d.Type, quote(d.Message), d.Dismissed)
}

// pagesSummary says that the session has windows its pages opened.
func pagesSummary(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf("; the session has %d pages: see pages", n)
}
