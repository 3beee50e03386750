// mangen writes the manual pages and shell completions the package installs, from the
// programs' own help: headless.1 from the CLI's command table (each command's --help),
// brokerd.8 from the text 'brokerd --help' prints, and headless's bash, zsh and fish
// completion scripts from the same table.
//
//	go run ./scripts/mangen -brokerd BIN/brokerd -out DIR
//
// DIR gets man1/headless.1, man8/brokerd.8, completion/{headless.bash,_headless,headless.fish},
// and copyright: the package's machine-readable copyright file (DEP-5) with the licence of
// every module linked into headless and brokerd (their build info names them; each licence's
// text is its module's LICENSE file, read from the module cache, which the build filled).
// The date is the commit's (SOURCE_DATE_EPOCH when set), so that a rebuild is the same bytes.
package main

import (
	"bytes"
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headless-dev/headless/internal/surface/cli"
	"github.com/headless-dev/headless/internal/surface/manroff"
	"github.com/headless-dev/headless/internal/version"
)

func main() {
	brokerd := flag.String("brokerd", "", "the built brokerd (its --help is brokerd.8)")
	out := flag.String("out", "", "the directory to write into")
	flag.Parse()
	if *brokerd == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: mangen -brokerd BIN/brokerd -out DIR")
		os.Exit(2)
	}
	date := time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			date = time.Unix(n, 0).UTC()
		}
	}
	day := date.Format("2006-01-02")
	// The footer names the packaged build, read from the headless beside brokerd.
	source := "headless"
	if bi, err := buildinfo.ReadFile(filepath.Join(filepath.Dir(*brokerd), "headless")); err == nil {
		source += " " + version.Of(bi)
	}
	if err := write(*out, "man1/headless.1", func(b *bytes.Buffer) error { return cli.ManPage(b, day, source) }); err != nil {
		fail(err)
	}
	help, err := exec.Command(*brokerd, "--help").Output()
	if err != nil {
		fail(fmt.Errorf("%s --help: %w", *brokerd, err))
	}
	first, rest, _ := strings.Cut(string(help), "\n")
	if err := write(*out, "man8/brokerd.8", func(b *bytes.Buffer) error {
		return manroff.Write(b, manroff.Page{Name: "brokerd", Section: 8, Date: day, Source: source, Manual: "System Administration",
			Summary:  strings.TrimPrefix(first, "brokerd — "),
			Sections: []manroff.Section{{Heading: "Description", Text: rest}, {Heading: "See also", Text: "headless(1)"}}})
	}); err != nil {
		fail(err)
	}
	if err := write(*out, "copyright", func(b *bytes.Buffer) error { return copyright(b, *brokerd) }); err != nil {
		fail(err)
	}
	for shell, name := range map[string]string{"bash": "completion/headless.bash", "zsh": "completion/_headless", "fish": "completion/headless.fish"} {
		if err := write(*out, name, func(b *bytes.Buffer) error { return cli.Completion(b, shell) }); err != nil {
			fail(err)
		}
	}
}

func write(dir, name string, f func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := f(&b); err != nil {
		return err
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b.Bytes(), 0o644)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mangen:", err)
	os.Exit(1)
}
