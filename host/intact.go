package host

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/wire"
)

// intactCheck is a look at the browser's processes (browserIntact, with their mappings) for a
// release, started ahead of it (checkAhead) so that it runs while the sign-in reads the page.
type intactCheck struct {
	nothing string
	done    chan struct{}
	err     error
	at      time.Time // when it ended
}

// intactFresh is how old a look ahead may be at the release; an older one is taken again.
const intactFresh = time.Second

// checkAhead starts a look at the browser's processes for a release to come; nothing is the
// end of its error's message (what was not done).
func (h *Host) checkAhead(nothing string) *intactCheck {
	c := &intactCheck{nothing: nothing, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = h.browserIntact(nothing, true)
		c.at = time.Now()
	}()
	return c
}

// result is the look's answer for a release now: the one started ahead if it is fresh, else
// (nil c, or an old look) one taken now.
func (c *intactCheck) result(h *Host) error {
	if c == nil {
		return h.browserIntact("nothing was asked for or released", true)
	}
	<-c.done // a walk of /proc: it ends by itself
	if c.err != nil || time.Since(c.at) <= intactFresh {
		return c.err
	}
	return h.browserIntact(c.nothing, true)
}

// failed is the look's error once it ended (nil for a nil c).
func (c *intactCheck) failed() error {
	if c == nil {
		return nil
	}
	<-c.done
	return c.err
}

// browserIntact is asked right before every release, and again right before anything is
// typed (checkBrowser): no process of the browser may have memory the user's processes can
// read, nor run code from a file that is not a root-owned system file (the mappings are read
// before the release only: for a user they are unreadable anyway, the processes undumpable,
// and as root reading every process's twice per sign-in made 32 concurrent sign-ins 29%
// slower), and the profile's blockers must not have changed. A browser that runs
// foreign code is killed (the next command relaunches it, its profile cleaned); an exposed
// one is a setting of the machine, left as it is. Either way nothing is asked for or typed;
// nothing ends the error's message (what was not done).
func (h *Host) browserIntact(nothing string, mappings bool) error {
	h.mu.Lock()
	b, g := h.browser, h.guard
	h.mu.Unlock()
	if b == nil {
		return nil
	}
	if t := g.Tampered(); t != "" {
		h.o.Log.Error("the profile's blocked entries changed under the browser; killing it", "found", t)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "the profile changed under the running browser (%s): it could have made Chromium load code or keep session data; the browser was killed, and %s", t, nothing)
	}
	c, err := checkBrowser(b.PID(), h.o.Chromium, os.Geteuid() == 0, mappings)
	if err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the browser's processes could not be checked (%w); %s", err, nothing)
	}
	if len(c.Strays) > 0 {
		h.o.Log.Error("processes of the headless group outside the browser; killing them and the browser", "found", strings.Join(c.StrayWhat, ", "))
		killAll(c.Strays)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "%s of yours ran with the browser's group outside the browser (%s): it could read the browser's memory, so it and the browser were killed, and %s", plural(len(c.Strays), "a process", "processes"), strings.Join(c.StrayWhat, ", "), nothing)
	}
	if c.Exposed != 0 {
		h.o.Log.Error("browser memory open to the user's processes; nothing released", "pid", c.Exposed)
		return wire.Errorf(wire.CodeBrowserExposed, "the memory of browser process %d can be read by any process of yours, so a password typed into a page could be read back out of it; %s", c.Exposed, nothing)
	}
	if c.Foreign != "" {
		h.o.Log.Error("foreign code in the browser; killing it", "found", c.Foreign)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "the browser runs code that is not a root-owned system file: %s; it was killed, and %s", c.Foreign, nothing)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// killBrowser kills the browser and every process of its tree: Chromium's sandboxed children
// are not all in its process group, and left over they would keep the headless group.
func killBrowser(b *cdp.Browser) {
	pids, _ := tree(b.PID())
	b.Kill()
	killAll(pids[min(1, len(pids)):])
}

func killAll(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sweepStrays kills, before a launch, every process of the user that runs with the host's
// group outside any browser of this host (strays): what a browser that crashed left, or what
// a program of the agent's made run with the group. An error leaves Chromium unlaunched.
func (h *Host) sweepStrays() error {
	pids, what, err := strays()
	if err != nil {
		return err
	}
	if len(pids) > 0 {
		h.o.Log.Warn("processes of the headless group outside any browser; killed before the launch", "found", strings.Join(what, ", "))
		killAll(pids)
	}
	return nil
}
