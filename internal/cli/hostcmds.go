package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// control dials the running host, or fails HOST_UNAVAILABLE.
func (c *cmd) control(ctx context.Context) (*rpc.Client, error) {
	cl, err := rpc.Dial(ctx, c.env.Layout.ControlSocket(), nil)
	if err != nil {
		return nil, wire.Errorf(wire.CodeHostUnavail, "the browser host is not running")
	}
	return cl, nil
}

// call runs one control.sock method.
func (c *cmd) call(ctx context.Context, method string, params, result any) error {
	cl, err := c.control(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	return hostErr(cl.Call(ctx, method, params, result))
}

// hostErr names a control-socket failure for what it is: the host went away, refused or did
// not answer in time (HOST_UNAVAILABLE, TIMEOUT), never a brokerd problem.
func hostErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpc.ErrUnreachable):
		return wire.Errorf(wire.CodeHostUnavail, "the browser host went away or refused the request (%s)", strings.TrimPrefix(err.Error(), rpc.ErrUnreachable.Error()+": "))
	case errors.Is(err, context.DeadlineExceeded):
		return wire.Errorf(wire.CodeTimeout, "the browser host did not answer in time")
	}
	return err
}
