// Command headless is the agent- and person-facing CLI of headless. See package
// github.com/headless-dev/headless/internal/cli.
package main

import (
	"context"
	"os"

	"github.com/headless-dev/headless/internal/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], cli.Env{
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		OpenTTY: cli.OpenTTY,
		Broker:  cli.BrokerDialer(os.Getenv),
	}))
}
