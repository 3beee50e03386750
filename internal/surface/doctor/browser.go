package doctor

// The browser's checks: Chromium runs, its sandbox, and a display for prompts.

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
)

func (d *run) checkChromium() {
	if !d.linux() {
		d.set(CheckChromium, Unsupported, "", "the browser host runs Debian Chromium on Linux only")
		return
	}
	if d.cfgErr != nil {
		d.set(CheckChromium, Warning, "fix the config first (check config)", "not checked: the config is refused")
		return
	}
	path := d.cfg.ChromiumPath()
	if err := hardening.CheckChromium(path); err != nil {
		hint := "install Debian's chromium package (apt-get install chromium), or name a root-owned ELF Chromium, in a directory only root can write, in the config's \"chromium\""
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.set(CheckChromium, Failed, hint, "%s is not installed", path)
		default:
			d.set(CheckChromium, Failed, hint, "%s is refused: %s", path, classifyExec(err))
		}
		return
	}
	switch {
	case d.host != nil && d.host.Chromium != "":
		d.set(CheckChromium, Healthy, "", "%s, running %s", path, procstat.Clean(d.host.Chromium, 64))
	case d.p.ChromiumVersion != nil && d.p.ChromiumVersion(path) != "":
		d.set(CheckChromium, Healthy, "", "%s, package version %s", path, procstat.Clean(d.p.ChromiumVersion(path), 64))
	default:
		d.set(CheckChromium, Healthy, "", "%s (version not known without running it; the doctor never launches a browser)", path)
	}
}

// classifyExec turns hardening's refusal into the doctor's own words.
func classifyExec(err error) string {
	msg := err.Error()
	for _, k := range []struct{ has, say string }{
		{"not an ELF", "not an ELF executable (a wrapper script is refused)"},
		{"writable by group or others", "writable by group or others"},
		{"owned by uid", "owned by another user than you or root"},
		{"owned by you", "owned by you: any program running as you could put a wrapper in its place"},
		{"its directory", "in a directory that programs running as you can write: one could put a wrapper in its place"},
		{"not executable", "not executable"},
		{"not a regular file", "not a regular file"},
		{"not an absolute path", "not an absolute path"},
	} {
		if strings.Contains(msg, k.has) {
			return k.say
		}
	}
	return "cannot be read"
}

// checkX11 warns of an X11 session: every X client of the user (an agent's shell with
// DISPLAY among them) can read the keys typed into a prompt and send it clicks and keys of its
// own, which no group keeps out; and the pixels of a browser with windows, and its input. The session is taken as X11 when DISPLAY is set and
// WAYLAND_DISPLAY is not (a Wayland session with Xwayland sets both, and its native clients'
// input is not shared); the config's presence.display without presence.wayland_display sends
// the prompts to an X display whatever the session.
func (d *run) checkX11() {
	if !d.linux() {
		d.set(CheckX11, Unsupported, "", "X11 sessions are judged on Linux only")
		return
	}
	hint := "log in to a Wayland session (GNOME or Plasma on Wayland), or use a terminal pinentry (pinentry-tty) in a terminal you watch; on X11 any program of yours can read and type into a prompt"
	// A browser with windows ('start --window', "window" in the config) is on that display
	// too: every X client can read its windows' pixels and type into them.
	windows := " and with 'headless start --window' (or \"window\" in the config) any X client can also read the browser's windows (a page, what you type there) and type into them"
	switch {
	case d.cfgErr == nil && d.cfg.Presence.Display != "" && d.cfg.Presence.WaylandDisplay == "":
		d.set(CheckX11, Warning, hint, "the config's presence.display sends prompts to an X11 display: any X client of yours can read what you type into them and click their buttons,%s", windows)
	case d.p.Display && !d.p.Wayland:
		d.set(CheckX11, Warning, hint, "this session uses X11 (DISPLAY is set, WAYLAND_DISPLAY is not): any X client of yours can read what you type into a prompt and click its buttons,%s", windows)
	case d.p.Wayland:
		d.set(CheckX11, Healthy, "", "this session uses Wayland (WAYLAND_DISPLAY is set): other clients cannot read or send a prompt's input")
	default:
		d.set(CheckX11, Healthy, "", "no display in this environment (neither DISPLAY nor WAYLAND_DISPLAY is set)")
	}
}
