package journey

import (
	"fmt"
	"strings"
)

// Markdown renders the report for a person: the status and why, the expected states reviewed
// and not reviewed, then each observed state. Every page-derived string is escaped so that a
// page cannot make the report say something it does not (no markdown, links, images or HTML
// of the page's own), and is shown as untrusted.
func (r Report) Markdown() string {
	var b strings.Builder
	title := r.JourneyID
	if r.Name != "" {
		title += ": " + r.Name
	}
	fmt.Fprintf(&b, "# Journey %s\n\n", md(title))
	fmt.Fprintf(&b, "**Status: %s** — %s\n\n", r.Status, md(r.Summary))
	fmt.Fprintf(&b, "- origin: %s\n- context: %s (session %s)\n", md(r.Origin), r.Context, md(r.Session))
	e := r.Emulation
	view := "the window's own"
	if e.Width != 0 {
		view = fmt.Sprintf("%dx%d", e.Width, e.Height)
	}
	theme := e.Theme
	if theme == "" {
		theme = "not emulated"
	}
	fmt.Fprintf(&b, "- viewport: %s (measured %dx%d); theme (prefers-color-scheme): %s; zoom: %d%% as CSS zoom on the page's root element, not browser zoom\n",
		view, e.ViewportWidth, e.ViewportHeight, theme, e.Zoom)
	fmt.Fprintf(&b, "- actions run: %d of %d in %d ms (budget %d ms); run %s\n\n", r.ActionsRun, r.ActionsTotal, r.ElapsedMS, r.BudgetMS, r.RunID)
	if c := r.CouldNotLook; c != nil {
		fmt.Fprintf(&b, "## Could not look\n\n**%s** at step %d (%s): %s\n\nHint: %s\n\n", c.Reason, c.Step, md(c.StateID), md(c.Message), md(c.Hint))
	}
	if f := r.Failure; f != nil {
		fmt.Fprintf(&b, "## Failure\n\n**%s** at step %d (%s): %s\n\nHint: %s\n\n", f.Reason, f.Step, md(f.StateID), md(f.Message), md(f.Hint))
	}
	b.WriteString("## Expected states\n\n| state | expected | reviewed | evidence |\n|---|---|---|---|\n")
	for _, s := range r.Reviewed {
		fmt.Fprintf(&b, "| %s | %s | yes | %s |\n", md(s.ID), md(s.Expected), strings.Join(s.Evidence, ", "))
	}
	for _, s := range r.NotReviewed {
		fmt.Fprintf(&b, "| %s | %s | **no** | |\n", md(s.ID), md(s.Expected))
	}
	if len(r.Reviewed)+len(r.NotReviewed) == 0 {
		b.WriteString("| (none) | | | |\n")
	}
	b.WriteString("\n## Observed states\n\n")
	fmt.Fprintf(&b, "_%s_\n\n", UntrustedNotice)
	for _, ev := range r.Evidence {
		outcome := "ok"
		if !ev.OK {
			outcome = "**" + string(ev.Code) + "**"
		}
		fmt.Fprintf(&b, "### %s — step %d, %s → %s: %s\n\n", ev.ID, ev.Step, ev.Action, md(ev.StateID), outcome)
		if ev.Message != "" {
			fmt.Fprintf(&b, "- message: %s\n", md(ev.Message))
		}
		if ev.Observed != "" {
			fmt.Fprintf(&b, "- observed: %s\n", md(ev.Observed))
		}
		fmt.Fprintf(&b, "- route: %s\n", md(ev.Route))
		if ev.Title != "" {
			fmt.Fprintf(&b, "- title: %s\n", md(ev.Title))
		}
		if l := ev.Login; l != nil {
			fmt.Fprintf(&b, "- login: alias %s at %s: %s (steps %d, navigated %t, cleared %t)\n", md(l.Alias), md(l.Origin), l.Status, l.Steps, l.Navigated, l.Cleared)
		}
		if t := ev.Target; t != nil {
			fmt.Fprintf(&b, "- target: %s\n", element(*t))
		}
		if f := ev.Focused; f != nil {
			fmt.Fprintf(&b, "- focused: %s\n", element(*f))
		}
		if ev.Screenshot != "" {
			fmt.Fprintf(&b, "- screenshot: %s\n", md(ev.Screenshot))
		}
		if ev.ScreenshotRefused != "" {
			fmt.Fprintf(&b, "- screenshot refused: %s\n", ev.ScreenshotRefused)
		}
		if len(ev.Text) > 0 {
			b.WriteString("- text:\n")
			for _, t := range ev.Text {
				fmt.Fprintf(&b, "  - %s\n", md(t))
			}
		}
		if len(ev.Elements) > 0 {
			b.WriteString("- elements:\n")
			for _, el := range ev.Elements {
				fmt.Fprintf(&b, "  - %s\n", element(el))
			}
		}
		if ev.Truncated {
			b.WriteString("- (truncated: a bound cut what is listed)\n")
		}
		b.WriteString("\n")
	}
	if len(r.Artifacts) > 0 {
		b.WriteString("## Screenshots\n\n| file | state | sha256 | bytes |\n|---|---|---|---|\n")
		for _, a := range r.Artifacts {
			fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", md(a.Name), md(a.StateID), a.SHA256, a.Bytes)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func element(e Element) string {
	s := md(e.Kind)
	if e.Name != "" {
		s += " " + md(fmt.Sprintf("%q", e.Name))
	}
	if r := e.Rect; r != nil {
		s += fmt.Sprintf(" at (%d, %d) %dx%d", r.X, r.Y, r.Width, r.Height)
	}
	return s
}

// md escapes s for one line of Markdown: every character that Markdown or HTML gives a meaning
// inside a line (emphasis, code, links, images, tables, HTML, entities, autolinks' "://") is
// backslash-escaped, and line breaks become spaces.
func md(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '!', '|', '<', '>', '~', '&', ':':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
