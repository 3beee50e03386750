package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/internal/version"
	"github.com/headless-dev/headless/internal/xdg"
)

// hostMain is the hidden "headless host" command: the host process itself (brokerd starts it;
// it is not in the CLI's command table, and the CLI links none of the host engine).
func hostMain(ctx context.Context, args []string, getenv func(string) string, layout xdg.Layout, stderr io.Writer) int {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fd := fs.Int("notify-fd", -1, "write one ready/error JSON line to this fd")
	lfd := fs.Int("lifeline-fd", -1, "shut down at EOF on this fd (brokerd holds its other end)")
	allow := fs.String("allow", "", "the navigation allowlist, comma-separated (default: the config's)")
	window := fs.Bool("window", false, "show the browser's windows on the display in the environment (brokerd's choice)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: headless host [--notify-fd N] [--lifeline-fd N] [--allow HOST,…] [--window]")
		return 2
	}
	o := host.RunOptions{Getenv: getenv, Layout: layout, Stderr: stderr, Version: version.String(), Window: *window}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "allow" {
			o.Allow = []string{*allow}
		}
	})
	// Inherited descriptors are not close-on-exec: mark them so, or Chromium inherits them.
	if *fd >= 3 {
		syscall.CloseOnExec(*fd)
		o.Notify = os.NewFile(uintptr(*fd), "notify")
	}
	if *lfd >= 3 && *lfd != *fd {
		syscall.CloseOnExec(*lfd)
		o.Lifeline = os.NewFile(uintptr(*lfd), "lifeline")
	}
	return host.Run(ctx, o)
}
