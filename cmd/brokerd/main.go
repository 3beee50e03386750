// Command brokerd is the per-user credential broker of headless. See package
// github.com/headless-dev/headless/internal/broker for its security contract and SECURITY.md
// for the threat model.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/xdg"
)

func main() {
	// First: no same-user process may ptrace brokerd or read its memory (it holds passwords).
	if err := hardening.Undumpable(); err != nil {
		fmt.Fprintf(os.Stderr, "brokerd: error: %v\nhint: brokerd refuses to run where it cannot make itself undumpable\n", err)
		os.Exit(1)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, xdg.New(os.Getenv, os.Getuid())))
}
