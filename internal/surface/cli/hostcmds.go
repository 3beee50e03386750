package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// control dials the running host; every failure is HOST_UNAVAILABLE (package control).
func (c *cmd) control(ctx context.Context) (*control.Client, error) {
	cl, err := c.env.DialControl(ctx)
	if err != nil {
		if errors.Is(err, control.ErrUnavailable) && wire.CodeOf(err) == wire.CodeHostUnavail {
			return nil, fmt.Errorf("the browser host is not running (%w)", err)
		}
		return nil, err
	}
	return cl, nil
}

// withHost runs fn with a connection to the running host.
func withHost[R any](ctx context.Context, c *cmd, fn func(*control.Client) (R, error)) (R, error) {
	cl, err := c.control(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	defer cl.Close()
	return fn(cl)
}

// sessionFlag is --session of the page verbs and auth login: the session S.
func sessionFlag(fs *flag.FlagSet) *string {
	return fs.String("session", control.DefaultSession, "the `NAME` of the session")
}
