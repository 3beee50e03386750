package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/headless-dev/headless/host/control"
)

type selectIn struct {
	sessionIn
	Ref    string   `json:"ref" jsonschema:"a select's ref from the latest snapshot"`
	Values []string `json:"values" jsonschema:"the options to select, each by its label (the snapshot lists them) or its value; several only for a multiple select"`
}

type scrollIn struct {
	sessionIn
	Ref string `json:"ref,omitempty" jsonschema:"scroll this element into view (and, with by, scroll inside it)"`
	By  int    `json:"by,omitempty" jsonschema:"CSS pixels to scroll by (negative: up; default one viewport)"`
}

// registerNewVerbs registers back, select, hover and scroll (issue 13's new verbs).
func (s *Server) registerNewVerbs() {
	addTool(s, "back", "Go back", "Go back one entry in the session's history (NO_HISTORY when there is none). The result is like visit's: it carries auth_required on a login page.",
		pageChange, func(ctx context.Context, c *call, in sessionIn) (control.PageResult, string, error) {
			return page(ctx, c, func(cl *control.Client) (control.PageResult, error) { return cl.Back(ctx, in.Session) })
		})
	addTool(s, "select", "Select options", "Select options of a native <select> by label or value (replacing its selection); fires the page's input and change handlers as a person's choice would.",
		pageIdempotent, func(ctx context.Context, c *call, in selectIn) (control.SelectResult, string, error) {
			cl, err := c.client(ctx)
			if err != nil {
				return control.SelectResult{}, "", err
			}
			r, err := cl.Select(ctx, control.SelectParams{Session: in.Session, Ref: in.Ref, Values: in.Values})
			if err != nil {
				return r, "", err
			}
			return r, fmt.Sprintf("selected %s in %s; %s", strings.Join(quoteAll(r.Selected), ", "), r.Ref, pageSummary(r.PageResult)), nil
		})
	addTool(s, "hover", "Hover an element", "Move the mouse over the element of a ref from the latest snapshot (menus and tooltips open on hover).",
		pageIdempotent, func(ctx context.Context, c *call, in refIn) (control.HoverResult, string, error) {
			cl, err := c.client(ctx)
			if err != nil {
				return control.HoverResult{}, "", err
			}
			r, err := cl.Hover(ctx, control.RefParams{Session: in.Session, Ref: in.Ref})
			if err != nil {
				return r, "", err
			}
			return r, "hovering " + r.Ref, nil
		})
	addTool(s, "scroll", "Scroll", "Scroll the element of a ref into view, or the page by a number of CSS pixels (default one viewport down). Answers where the viewport is now.",
		pageChange, func(ctx context.Context, c *call, in scrollIn) (control.ScrollResult, string, error) {
			cl, err := c.client(ctx)
			if err != nil {
				return control.ScrollResult{}, "", err
			}
			r, err := cl.Scroll(ctx, control.ScrollParams{Session: in.Session, Ref: in.Ref, By: in.By})
			if err != nil {
				return r, "", err
			}
			return r, fmt.Sprintf("viewport at %d,%d of %dx%d", r.ScrollX, r.ScrollY, r.ContentWidth, r.ContentHeight), nil
		})
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = quote(s)
	}
	return out
}
