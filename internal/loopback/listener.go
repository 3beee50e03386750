package loopback

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// MaxLine is the longest line Listener.String returns, in bytes.
const MaxLine = 1024

// Bounds of the parts of Listener.String.
const (
	maxShownGroups = 4  // groups of sockets with the same holders
	maxShownPIDs   = 3  // pids of one group
	maxShownAddrs  = 4  // addresses of one group
	maxExeShown    = 80 // bytes of an executable path (head and tail kept), quotes aside
	trailerRoom    = 64 // kept free for "; and N more sockets (process scan incomplete)"
)

// String describes l in one line of printable ASCII for a presence prompt and the audit log:
//
//	pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080
//	pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080 and [::1]:8080
//	pids 10, 11 and 12 (/usr/sbin/nginx, uid 0) listen on 0.0.0.0:8080
//	uid 0 (process not visible) listens on 127.0.0.1:8080
//	pid 7 (/usr/bin/a, uid 1000) listens on 127.0.0.1:8080; pid 9 (/usr/bin/b, uid 1000) listens on [::1]:8080
//	nothing listens on 127.0.0.1:8080 or [::1]:8080
//
// Sockets with the same holders are one group; groups are separated by "; ". An executable
// path with other bytes than [A-Za-z0-9/._+@~=-] is quoted (Go syntax, ASCII only), one longer
// than 80 bytes is shortened to quoted head and tail around "...", one that cannot be read is
// "exe not readable". Long lists end in "and N more"; the whole line is at most MaxLine bytes.
func (l Listener) String() string {
	var b strings.Builder
	if len(l.Sockets) == 0 {
		b.WriteString("nothing listens on ")
		var dests []string
		for _, c := range l.Candidates {
			if !c.Addr().IsUnspecified() && !c.Addr().Is4In6() {
				dests = append(dests, c.String())
			}
		}
		if len(dests) == 0 {
			b.WriteString("the origin's addresses")
		}
		b.WriteString(strings.Join(dests, " or "))
		return bound(b.String())
	}

	type group struct {
		pids  []int
		socks []Socket
	}
	var groups []*group
	for _, s := range l.Sockets {
		var pids []int
		for _, p := range l.Procs {
			if slices.Contains(p.Inodes, s.Inode) {
				pids = append(pids, p.PID)
			}
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return slices.Equal(g.pids, pids) })
		if i < 0 {
			groups = append(groups, &group{pids: pids})
			i = len(groups) - 1
		}
		groups[i].socks = append(groups[i].socks, s)
	}
	for i, g := range groups {
		text := l.group(g.pids, g.socks)
		if i == maxShownGroups || i > 0 && b.Len()+2+len(text) > MaxLine-trailerRoom {
			more := 0
			for _, g := range groups[i:] {
				more += len(g.socks)
			}
			b.WriteString("; and " + strconv.Itoa(more) + " more sockets")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(text)
	}
	if l.Incomplete {
		b.WriteString(" (process scan incomplete)")
	}
	return bound(b.String())
}

// group describes sockets with the same holders: "HOLDERS listen(s) on ADDRS".
func (l Listener) group(pids []int, socks []Socket) string {
	var b strings.Builder
	var uids []int
	for _, s := range socks {
		if !slices.Contains(uids, s.UID) {
			uids = append(uids, s.UID)
		}
	}
	slices.Sort(uids)
	uidText := "uid "
	if len(uids) > 1 {
		uidText = "uids "
	}
	uidText += list(itoas(uids), maxShownPIDs)
	l.writeHolders(&b, pids, uidText)
	if len(pids) > 1 {
		b.WriteString(" listen on ")
	} else {
		b.WriteString(" listens on ")
	}
	addrs := make([]string, 0, len(socks))
	for _, s := range socks {
		addrs = append(addrs, s.Addr.String())
	}
	b.WriteString(list(addrs, maxShownAddrs))
	return b.String()
}

// writeHolders writes "pid P (EXE, UIDS)", "pids P1, P2 (EXE, UIDS)",
// "pids P1 (EXE1), P2 (EXE2) (UIDS)" or "UIDS (process not visible)".
func (l Listener) writeHolders(b *strings.Builder, pids []int, uids string) {
	if len(pids) == 0 {
		b.WriteString(uids + " (process not visible)")
		return
	}
	exes := make([]string, len(pids))
	for i, pid := range pids {
		j := slices.IndexFunc(l.Procs, func(p Process) bool { return p.PID == pid })
		exes[i] = showExe(l.Procs[j].Exe)
	}
	if len(pids) == 1 {
		b.WriteString("pid ")
	} else {
		b.WriteString("pids ")
	}
	same := !slices.ContainsFunc(exes, func(e string) bool { return e != exes[0] })
	items := itoas(pids)
	for i := range items {
		if !same {
			items[i] += " (" + exes[i] + ")"
		}
	}
	b.WriteString(list(items, maxShownPIDs))
	if same {
		b.WriteString(" (" + exes[0] + ", " + uids + ")")
	} else {
		b.WriteString(" (" + uids + ")")
	}
}

// list joins items as "a", "a and b", "a, b and c", or "a, b, c and 4 more" beyond max.
func list(items []string, max int) string {
	if len(items) > max {
		return strings.Join(items[:max], ", ") + " and " + strconv.Itoa(len(items)-max) + " more"
	}
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func itoas(v []int) []string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return s
}

// showExe prints an executable path safely on one line; see Listener.String.
func showExe(exe string) string {
	if exe == "" {
		return "exe not readable"
	}
	plain := len(exe) <= maxExeShown
	for _, c := range []byte(exe) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._+@~=-", c) >= 0) {
			plain = false
			break
		}
	}
	if plain {
		return exe
	}
	if q := strconv.QuoteToASCII(exe); len(q) <= maxExeShown+2 {
		return q
	}
	// Longest head and tail whose quoted forms take half the room each.
	head, tail := exe[:min(len(exe), maxExeShown/2)], exe[max(0, len(exe)-maxExeShown/2):]
	for len(strconv.QuoteToASCII(head)) > maxExeShown/2+2 {
		head = head[:len(head)-1]
	}
	for len(strconv.QuoteToASCII(tail)) > maxExeShown/2+2 {
		tail = tail[1:]
	}
	return strconv.QuoteToASCII(head) + "..." + strconv.QuoteToASCII(tail)
}

// bound cuts s (printable ASCII) to MaxLine bytes.
func bound(s string) string {
	if len(s) <= MaxLine {
		return s
	}
	return s[:MaxLine-3] + "..."
}

// Key identifies the listening sockets of l: it changes when one is replaced, added or
// removed, and is "" when nothing listens. It lists each socket's inode, address and uid,
// ordered by inode; the holders are not part of it (pre-forked workers come and go).
func (l Listener) Key() string {
	if len(l.Sockets) == 0 {
		return ""
	}
	s := slices.Clone(l.Sockets)
	slices.SortFunc(s, func(a, b Socket) int {
		if c := cmp.Compare(a.Inode, b.Inode); c != 0 {
			return c
		}
		return a.Addr.Compare(b.Addr)
	})
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = strconv.FormatUint(k.Inode, 10) + "@" + k.Addr.String() + "/" + strconv.Itoa(k.UID)
	}
	return strings.Join(parts, " ")
}
