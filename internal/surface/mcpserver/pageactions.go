package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

type selectIn struct {
	sessionIn
	Ref    string   `json:"ref" jsonschema:"a select's"`
	Values []string `json:"values" jsonschema:"labels or values; several for a multiple one"`
}

type backIn struct {
	sessionIn
	Forward bool `json:"forward,omitempty"`
	Reload  bool `json:"reload,omitempty"`
}

type scrollIn struct {
	sessionIn
	Ref string `json:"ref,omitempty" jsonschema:"into view (with by: inside it)"`
	By  int    `json:"by,omitempty" jsonschema:"CSS px (negative: up; default one viewport)"`
}

// registerPageActions registers the tools that act on the page beside click and fill: back,
// select, hover and scroll.
func (s *Server) registerPageActions() {
	addTool(s, "back", "Go back", "Go back (or forward, or reload) in the session's history (NO_HISTORY if none); answers as visit.",
		pageChange, func(ctx context.Context, c *call, in backIn) (control.PageResult, string, error) {
			return page(ctx, c, func(cl *control.Client) (control.PageResult, error) {
				switch {
				case in.Forward && in.Reload:
					return control.PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "back takes forward or reload, not both")
				case in.Forward:
					return cl.Forward(ctx, in.Session)
				case in.Reload:
					return cl.Reload(ctx, in.Session)
				}
				return cl.Back(ctx, in.Session)
			})
		})
	addTool(s, "select", "Select", "Select options of a native <select>, as a person would.",
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
	addTool(s, "hover", "Hover", "Move the mouse over an element (opens menus, tooltips).",
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
	addTool(s, "scroll", "Scroll", "Scroll an element into view, or the page; answers the viewport's position.",
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
