// Command brokerd is the per-user credential broker of headless. See package
// github.com/headless-dev/headless/internal/broker for its security contract and SECURITY.md
// for the threat model.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
