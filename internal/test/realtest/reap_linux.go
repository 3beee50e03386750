package realtest

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/procstat"
)

// RunReaping runs m as a child subreaper, so that descendants orphaned by a killed program (a
// pinentry, Chromium, a keyring) become children of the test process instead of init's; after
// the tests they must all be dead: zombies are reaped, anything still running fails the run
// (and is killed). It returns the exit status for os.Exit. what names the package in messages.
func RunReaping(m *testing.M, what string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER): %v\n", err)
		return 1
	}
	code := m.Run()
	var running []int
	for bound := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		running = running[:0]
		for _, pid := range ChildProcesses() {
			if state, _ := ProcStat(pid); state == "Z" {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, 0, nil)
			} else {
				running = append(running, pid)
			}
		}
		if len(running) == 0 || time.Now().After(bound) {
			break
		}
	}
	if len(running) > 0 {
		fmt.Fprintf(os.Stderr, "%s tests leaked running processes: %v\n", what, running)
		for _, pid := range running {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		code = 1
	}
	return code
}

// ChildProcesses lists the processes whose parent is this process.
func ChildProcesses() []int {
	var kids []int
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid := ProcStat(pid); ppid == self {
			kids = append(kids, pid)
		}
	}
	return kids
}

// ProcStat returns pid's state letter and parent pid, or "" when there is no such process.
func ProcStat(pid int) (state string, ppid int) {
	st, _ := procstat.Read(pid)
	return st.State, st.PPID
}
