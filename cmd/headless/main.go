// Command headless is the agent- and person-facing CLI of headless. See package
// github.com/headless-dev/headless/internal/surface/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/surface/cli"
	"github.com/headless-dev/headless/internal/xdg"
)

func main() {
	// First, in every invocation: the CLI reads passwords from the terminal and the host holds
	// released ones, so no same-user process may ptrace this process or read its memory.
	if err := hardening.Undumpable(); err != nil {
		fmt.Fprintf(os.Stderr, "headless: error: %v\nhint: headless refuses to run where it cannot make itself undumpable\n", err)
		os.Exit(1)
	}
	setName()
	if err := identity(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "headless: error: %v\n", err)
		os.Exit(1)
	}
	if len(os.Args) > 1 && os.Args[1] == hardening.PinentryShim {
		os.Exit(pinentryExec(os.Args[2:]))
	}
	layout := xdg.New(os.Getenv, os.Getuid())
	if len(os.Args) > 1 && os.Args[1] == "host" {
		os.Exit(hostMain(context.Background(), os.Args[2:], os.Getenv, layout, os.Stderr))
	}
	os.Exit(cli.Run(context.Background(), os.Args[1:], cli.Env{
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		Layout:           layout,
		OpenTTY:          cli.OpenTTY,
		Broker:           cli.BrokerDialer(layout),
		DialBroker:       cli.BrokerSocket(layout),
		DialControl:      cli.ControlSocket(layout),
		StderrIsTerminal: cli.StderrIsTerminal,
		Stdin:            os.Stdin,
		Signal:           syscall.Kill,
		Alive:            procstat.Alive,
		ClearStopped:     host.ClearStopped,
		MCPStdio:         cli.MCPStdio,
		ReadArtifact:     cli.ArtifactReader(layout),
		Doctor:           cli.DoctorProbes(os.Getenv, host.InspectProfile),
		VerifyAudit:      cli.BrokerdAudit(layout),
	}))
}
