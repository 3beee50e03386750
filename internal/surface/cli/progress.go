package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/config"
)

// Progress on a terminal: a line on stderr (never on stdout, never with --json) that says how
// long a command has waited and for what, rewritten in place every second, and cleared when
// the command returns.

// progressEvery is how often the line is rewritten.
const progressEvery = time.Second

// progressLine shows what(elapsed) on stderr while the returned stop is not called; nothing
// when stderr is no terminal or the output is JSON.
func (c *cmd) progressLine(what func(elapsed time.Duration) string) (stop func()) {
	if c.json || c.env.StderrIsTerminal == nil || !c.env.StderrIsTerminal() {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	write := func() { fmt.Fprintf(c.env.Stderr, "\r\x1b[K%s", what(time.Since(start).Truncate(time.Second))) }
	write()
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				write()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		fmt.Fprint(c.env.Stderr, "\r\x1b[K")
	}
}

// presence is the prompt's timeout the config sets (its default when the config cannot be
// read: brokerd would refuse to start with a bad one anyway), and whether the prompt may be
// on a terminal (a pinentry program for terminals, or one with no display configured): a line
// rewritten every second there would garble it.
func (c *cmd) presence() (timeout time.Duration, onTerminal bool) {
	cfg, onTerminal := c.promptConfig()
	return cfg.PresenceTimeout(), onTerminal
}

// promptConfig is the config (its defaults when it cannot be read) and whether the prompt
// may be on a terminal, as presence says.
func (c *cmd) promptConfig() (cfg config.Config, onTerminal bool) {
	cfg = config.Defaults()
	if p, err := c.env.Layout.Config(); err == nil {
		if loaded, err := config.Load(p); err == nil {
			cfg = loaded
		}
	}
	pr := cfg.Presence
	onTerminal = (pr.Provider == "pinentry" || pr.Provider == "passphrase") &&
		(strings.Contains(pr.Program, "tty") || strings.Contains(pr.Program, "curses") || pr.Display == "" && pr.WaylandDisplay == "")
	return cfg, onTerminal
}

// waitPresence shows, while the returned stop is not called, how long the person has been
// waited for: a line rewritten every second, or one static line when the prompt may be on
// this terminal.
func (c *cmd) waitPresence(what string) (stop func()) {
	limit, onTerminal := c.presence()
	return c.waitPrompt(what, limit, onTerminal)
}

// waitPrompt is waitPresence for a prompt bounded by limit.
func (c *cmd) waitPrompt(what string, limit time.Duration, onTerminal bool) (stop func()) {
	if onTerminal {
		if !c.json && c.env.StderrIsTerminal != nil && c.env.StderrIsTerminal() {
			fmt.Fprintf(c.env.Stderr, "%s (the prompt times out after %s)…\n", what, limit)
		}
		return func() {}
	}
	return c.progressLine(func(d time.Duration) string { return fmt.Sprintf("%s: %s of %s", what, d, limit) })
}
