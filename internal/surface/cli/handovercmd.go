package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/headless-dev/headless/host/control"
)

// handoverAbout is 'headless handover --help'.
const handoverAbout = `Asks the person to do, in the session's window, what only a person can (a CAPTCHA, a
consent screen, a sign-in with a hardware key), and returns when they are done. The window is
brought to the front and brokerd asks the person at its presence prompt ("The agent asks you
to act in browser session S: REASON. Press Done when you are done"), which the agent cannot
answer. Meanwhile every command on that session answers HANDED_OVER; other sessions work.

status: done or declined (PRESENCE_TIMEOUT when nobody answered within the config's
presence.handover_timeout_seconds, default 300). Afterwards a password or code the person
typed is kept from every output as if headless had typed it. A host without windows
('headless start' without --window) hands over only where no display exists: the prompt then
names the page's URL and title, for what the person can do elsewhere (NO_WINDOW otherwise).

Example:
    headless handover checkout --reason "solve the CAPTCHA on the sign-in page"`

// handover hands a session over to the person.
func (c *cmd) handover(fs *flag.FlagSet) run {
	reason := fs.String("reason", "", "what the person should do, in one line (shown to them quoted)")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if *reason == "" {
			return nil, nil, usagef("--reason is required: say what the person should do")
		}
		cfg, onTerminal := c.promptConfig()
		stop := c.waitPrompt("waiting for the person to act and press Done", cfg.HandoverTimeout(), onTerminal)
		r, err := withHost(ctx, c, func(cl *control.Client) (control.HandoverResult, error) {
			return cl.Handover(ctx, control.HandoverParams{Session: args[0], Reason: *reason})
		})
		stop()
		if err != nil {
			return nil, nil, err
		}
		return r, func(w io.Writer) {
			fmt.Fprintf(w, "%s: %s\nnow at: %s\n", r.Session, r.Status, r.URL)
		}, nil
	}
}
