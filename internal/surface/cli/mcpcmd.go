package cli

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/surface/mcpserver"
	"github.com/headless-dev/headless/internal/version"
	"github.com/headless-dev/headless/internal/wire"
)

// mcp serves the Model Context Protocol on stdio until the client closes it (or SIGINT or
// SIGTERM): package mcpserver, wired to this CLI's sockets.
func (c *cmd) mcp(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if c.env.MCPStdio == nil {
			return nil, nil, wire.Errorf(wire.CodeInternal, "no stdio to serve on")
		}
		in, out, err := c.env.MCPStdio()
		if err != nil {
			return nil, nil, wire.Errorf(wire.CodeInternal, "stdio: %w", err)
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		srv := mcpserver.New(mcpserver.Options{
			Version: version.String(),
			Dial:    c.env.DialControl,
			Ensure: func(ctx context.Context) error {
				_, err := c.ensureStarted(ctx, false, nil, false)
				return err
			},
			Status:       c.mcpStatus,
			Credentials:  c.mcpCredentials,
			Doctor:       c.doctorReport,
			ReadArtifact: c.env.ReadArtifact,
			Log:          slog.New(slog.NewTextHandler(c.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		return nil, nil, srv.Serve(ctx, in, out)
	}
}

func (c *cmd) mcpStatus(ctx context.Context) (mcpserver.Status, error) {
	res := mcpserver.Status{Version: version.String()}
	if st, err := withHost(ctx, c, func(cl *control.Client) (control.Status, error) { return cl.Status(ctx) }); err == nil {
		res.HostRunning, res.Host = true, &st
	}
	if b, err := c.env.DialBroker(ctx); err == nil {
		if v, err := b.Version(ctx); err == nil {
			res.BrokerRunning, res.BrokerPID, res.Presence = true, v.PID, v.Presence
		}
		b.Close()
	}
	return res, nil
}

func (c *cmd) mcpCredentials(ctx context.Context, session, origin string) (brokerapi.ListResult, error) {
	st, err := c.storeOf(ctx, session)
	if err != nil {
		return brokerapi.ListResult{}, err
	}
	creds, err := c.list(ctx, st, origin)
	if creds == nil {
		creds = []brokerapi.Credential{}
	}
	return brokerapi.ListResult{Credentials: creds}, err
}
