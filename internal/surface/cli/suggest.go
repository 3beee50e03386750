package cli

import (
	"flag"
	"strings"
)

// Suggestions for a mistyped command or flag: the nearest known one, by edit distance, when it
// is near enough to be what was meant (at most a third of its length, at least one edit).

// nearest is the candidate nearest to s, "" when none is near enough.
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(best)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bounded inputs: names of commands and
// flags, and what was typed, cut at 64 bytes).
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// didYouMean is " (did you mean X?)" for the nearest candidate, "" for none.
func didYouMean(s string, candidates []string) string {
	if n := nearest(s, candidates); n != "" {
		return " (did you mean " + n + "?)"
	}
	return ""
}

// commandNames are the table's command names (a group's commands with their group word) and
// the group words themselves.
func commandNames(table []command) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range table {
		out = append(out, c.name)
		if g, _, ok := strings.Cut(c.name, " "); ok && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// flagNames are fs's flags as typed (--name), with --json and --help.
func flagNames(fs *flag.FlagSet) []string {
	out := []string{"--help"}
	fs.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	return out
}
