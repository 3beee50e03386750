package cli

import (
	"bytes"
	"io"
	"sort"
	"strings"

	"github.com/headless-dev/headless/internal/surface/manroff"
	"github.com/headless-dev/headless/internal/wire"
)

// ManPage writes headless(1) from the command table: the overview 'headless help' prints, then
// each command's --help as it prints it, then the error codes with their hints. The package
// build (scripts/deb.sh, through scripts/mangen) installs it; it never says what --help does not.
func ManPage(w io.Writer, date, source string) error {
	c := &cmd{}
	table := c.commands()
	var synopsis bytes.Buffer
	listCommands(&synopsis, table, func(string) bool { return true })
	var cmds []manroff.Section
	for i := range table {
		var b bytes.Buffer
		table[i].help(c, &b)
		cmds = append(cmds, manroff.Section{Heading: "headless " + table[i].name, Text: b.String()})
	}
	var groupsText bytes.Buffer
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		groupsText.WriteString("headless " + g + ": " + groups[g] + "\n")
	}
	var codes bytes.Buffer
	for _, code := range wire.Codes() {
		codes.WriteString(string(code) + "\n    " + wire.Hint(code) + "\n")
	}
	return manroff.Write(w, manroff.Page{
		Name: "headless", Section: 1, Date: date, Source: source, Manual: "User Commands",
		Summary: strings.TrimPrefix(strings.SplitN(overviewHead, "\n", 2)[0], "headless — "),
		Sections: []manroff.Section{
			{Heading: "Synopsis", Text: synopsis.String()},
			{Heading: "Description", Text: strings.TrimPrefix(overviewTail, "\n")},
			{Heading: "Command groups", Text: groupsText.String()},
			{Heading: "Commands", Subsections: cmds},
			{Heading: "Error codes", Text: "Every error names one of these codes (with --json: {\"error\":{\"code\",\"message\",\"hint\"}}),\nwith this hint unless the error has one of its own.\n\n" + codes.String()},
			{Heading: "See also", Text: "brokerd(8); /usr/share/doc/headless/README.md and SECURITY.md"},
		},
	})
}
