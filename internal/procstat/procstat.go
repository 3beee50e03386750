// Package procstat reads the few fields of /proc/PID/stat that headless needs: a process's
// state, its parent and its controlling terminal. On systems without /proc every lookup
// reports no such process.
package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// Stat is part of one /proc/PID/stat line.
type Stat struct {
	State string // "R", "S", "Z", …
	PPID  int
	TTY   int // tty_nr: 0 when the process has no controlling terminal
}

// Read returns pid's stat, or ok == false when there is no such process (or no /proc).
func Read(pid int) (st Stat, ok bool) {
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
	st.State = string(f[0])
	st.PPID, _ = strconv.Atoi(string(f[1]))
	st.TTY, _ = strconv.Atoi(string(f[4]))
	return st, true
}

// Alive reports whether pid is a running process; a zombie has exited.
func Alive(pid int) bool {
	st, ok := Read(pid)
	return ok && st.State != "Z" && st.State != "X"
}
