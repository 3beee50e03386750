package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// licences are the licence texts the linked modules use, told apart by a phrase of each.
var licences = []struct{ id, phrase string }{
	{"Apache-2.0", "Apache License"},
	{"BSD-3-clause", "Neither the name of"},
	{"BSD-2-clause", "Redistributions in binary form must reproduce"},
	{"MIT", "Permission is hereby granted, free of charge"},
	{"ISC", "Permission to use, copy, modify, and/or distribute this software"},
}

// copyright writes the DEP-5 copyright file of the package: headless's own paragraph, then one
// per module linked into brokerd (given) and the headless beside it, with its licence.
func copyright(b *bytes.Buffer, brokerd string) error {
	mods := map[string]string{} // path → version
	for _, bin := range []string{brokerd, filepath.Join(filepath.Dir(brokerd), "headless")} {
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			mods[d.Path] = d.Version
		}
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(out))
	fmt.Fprint(b, `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: headless
Source: https://github.com/headless-dev/headless
Comment: headless and brokerd are static Go binaries; the Go modules linked into them are
 listed below with their licences (from each module's own LICENSE file).

Files: *
Copyright: the headless developers
License: headless
 The headless developers have not chosen a licence for headless yet: no licence is granted
 beyond what the law allows. (A licence file in the source will replace this paragraph.)
`)
	paths := make([]string, 0, len(mods))
	for p := range mods {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	used := map[string]string{}
	for _, p := range paths {
		dir := filepath.Join(cache, escapePath(p)+"@"+mods[p])
		text, err := licenceText(dir)
		if err != nil {
			return fmt.Errorf("module %s@%s: %w", p, mods[p], err)
		}
		id := ""
		for _, l := range licences {
			if strings.Contains(text, l.phrase) {
				id = l.id
				break
			}
		}
		if id == "" {
			return fmt.Errorf("module %s@%s: a licence this tool does not know", p, mods[p])
		}
		if _, ok := used[id]; !ok {
			used[id] = text
		}
		holder := "the " + p + " authors"
		for _, l := range strings.Split(text, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "Copyright") && !strings.Contains(t, "Copyright [yyyy]") && !strings.Contains(t, "copyright notice") {
				holder = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "Copyright"), " (c)"))
				break
			}
		}
		fmt.Fprintf(b, "\nFiles: go-modules/%s\nCopyright: %s\nLicense: %s\nComment: Go module %s %s, linked into headless and brokerd.\n", p, holder, id, p, mods[p])
	}
	ids := make([]string, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(b, "\nLicense: %s\n", id)
		if common, ok := commonLicences[id]; ok {
			// Debian ships this one: the copyright file refers to it (Policy 12.5).
			fmt.Fprintf(b, " On Debian systems, the full text of the %s licence is in\n %s.\n", id, common)
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(used[id], "\n"), "\n") {
			if strings.TrimSpace(l) == "" {
				b.WriteString(" .\n")
			} else {
				b.WriteString(" " + strings.TrimRight(l, " \t") + "\n")
			}
		}
	}
	return nil
}

// commonLicences are the licences Debian ships in /usr/share/common-licenses.
var commonLicences = map[string]string{"Apache-2.0": "/usr/share/common-licenses/Apache-2.0"}

// licenceText is the text of the LICENSE (or LICENCE, COPYING) file of the module in dir.
func licenceText(dir string) (string, error) {
	for _, name := range []string{"LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "COPYING"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return string(b), nil
		}
	}
	return "", fmt.Errorf("no LICENSE file in %s", dir)
}

// escapePath is a module path as the module cache spells it (upper-case letters as !lower).
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
