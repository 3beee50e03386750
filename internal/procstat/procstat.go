// Package procstat reads the few facts of /proc/PID that headless needs: a process's state,
// its parent, its controlling terminal, its name, and a bounded chain of its ancestors for
// prompts and audit records. On systems without /proc every lookup reports no such process.
//
// # Security contract
//
// Everything here is informational: what a person is shown, or what an audit record names.
// A pid can be reused once its process is reaped, a comm is chosen by the process itself, and
// the executable of an undumpable process (prctl PR_SET_DUMPABLE 0, as headless and brokerd
// make themselves) or of another user's process cannot be read by an unprivileged process:
// [Chain] then reports only the comm and says so ([Proc.String]). Nothing is ever decided on
// these values alone. Every string is bounded, valid UTF-8 and free of control characters,
// and no input makes these functions panic.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/clip"
)

// Bounds of a Proc's strings and of a chain.
const (
	MaxExe   = 256 // bytes of an executable path
	MaxComm  = 16  // bytes of a comm (the kernel keeps 15)
	MaxChain = 8   // processes in one chain
)

// Stat is part of one /proc/PID/stat line.
type Stat struct {
	State string // "R", "S", "Z", …
	PPID  int
	PGRP  int    // its process group
	TTY   int    // tty_nr: 0 when the process has no controlling terminal
	Comm  string // the process's name as the kernel keeps it (15 bytes at most)
}

// Read returns pid's stat, or ok == false when there is no such process (or no /proc).
func Read(pid int) (st Stat, ok bool) {
	if pid <= 0 {
		return st, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, false
	}
	return parse(b)
}

// parse reads "pid (comm) state ppid pgrp session tty_nr …"; comm may hold spaces and
// parentheses, so the fields start after the last ')'.
func parse(b []byte) (st Stat, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 5 {
		return st, false
	}
	if j := bytes.IndexByte(b, '('); j >= 0 && j < i {
		st.Comm = Clean(string(b[j+1:i]), MaxComm)
	}
	st.State = string(f[0])
	st.PPID, _ = strconv.Atoi(string(f[1]))
	st.PGRP, _ = strconv.Atoi(string(f[2]))
	st.TTY, _ = strconv.Atoi(string(f[4]))
	return st, true
}

// Alive reports whether pid is a running process; a zombie has exited.
func Alive(pid int) bool {
	st, ok := Read(pid)
	return ok && st.State != "Z" && st.State != "X"
}

// Proc names one process for a prompt or an audit record: its pid and, when this process may
// read it, its executable; otherwise only its comm.
type Proc struct {
	PID  int    `json:"pid"`
	Exe  string `json:"exe,omitempty"`
	Comm string `json:"comm,omitempty"`
}

// String is "pid 12 /usr/bin/bash", or "pid 12 comm "headless" (executable unreadable)" when
// only the comm is known: the executable of an undumpable or another user's process cannot be
// read, and a comm is whatever the process calls itself.
func (p Proc) String() string {
	switch {
	case p.Exe != "":
		return fmt.Sprintf("pid %d %s", p.PID, p.Exe)
	case p.Comm != "":
		return fmt.Sprintf("pid %d comm %q (executable unreadable)", p.PID, p.Comm)
	}
	return fmt.Sprintf("pid %d (unknown)", p.PID)
}

// Describe joins a chain, the process first, with " ← " (its parent, grandparent, …).
func Describe(chain []Proc) string {
	parts := make([]string, 0, len(chain))
	for _, p := range chain {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, " ← ")
}

// Lookup returns what can be read about pid: its executable (from /proc/PID/exe) and its
// comm. ok is false when there is no such process.
func Lookup(pid int) (p Proc, ok bool) {
	p, _, ok = lookup(pid)
	return p, ok
}

func lookup(pid int) (Proc, Stat, bool) {
	st, ok := Read(pid)
	if !ok {
		return Proc{PID: pid}, st, false
	}
	p := Proc{PID: pid, Comm: st.Comm}
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
		p.Exe = Clean(exe, MaxExe)
	}
	return p, st, true
}

// Chain returns pid and then its ancestors, n processes at most (at most MaxChain), stopping
// after pid 1, at a process that is gone, or at a loop. A pid that does not exist gives a
// chain of that pid alone, with nothing known about it; n < 1 gives nil.
func Chain(pid, n int) []Proc {
	if n < 1 || pid <= 0 {
		return nil
	}
	n = min(n, MaxChain)
	var out []Proc
	seen := map[int]bool{}
	for len(out) < n && pid > 0 && !seen[pid] {
		seen[pid] = true
		p, st, ok := lookup(pid)
		out = append(out, p)
		if !ok || pid == 1 {
			break
		}
		pid = st.PPID
	}
	return out
}

// Lineage returns pid and then its ancestors' pids, n at most, read from /proc: pids only,
// without Chain's limit of MaxChain, for a question such as "did this process start that
// one". It stops after pid 1, at a process that is gone, or at a loop; a pid that does not
// exist gives that pid alone, and n < 1 or pid <= 0 gives nil.
func Lineage(pid, n int) []int {
	var out []int
	seen := map[int]bool{}
	for len(out) < n && pid > 0 && !seen[pid] {
		seen[pid] = true
		out = append(out, pid)
		st, ok := Read(pid)
		if !ok || pid == 1 {
			break
		}
		pid = st.PPID
	}
	return out
}

// Clean makes s fit a prompt line: valid UTF-8, control and other non-printing characters
// replaced by '?', cut to at most max bytes on a rune boundary.
func Clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return '?'
		}
		return r
	}, s)
	return clip.Text(s, max)
}

// Printable reports whether s is valid UTF-8 with no control or other non-printing
// characters (spaces allowed): what Clean leaves unchanged.
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}
