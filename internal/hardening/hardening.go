// Package hardening closes the cheap doors a same-user process has into headless's own
// processes, and reports the facts a doctor needs to say which doors stay open.
//
// # Security contract
//
//   - [Undumpable] (Linux: prctl(PR_SET_DUMPABLE, 0)), called first thing in main by brokerd
//     and by every invocation of the headless binary (CLI and host), makes the process
//     undumpable: a same-user process that is not root can no longer ptrace it, nor open its
//     /proc/PID/mem, environ, fd/ or exe, and it leaves no core dump. It stays so for the
//     life of the process image; an exec resets it (Chromium, started by the host, is
//     dumpable again). It then checks that the kernel agrees — a non-dumpable process's
//     /proc/PID files belong to root — rather than trusting prctl's answer, which a seccomp
//     filter installed by whoever execs headless can fake (red-team round 3 did, with
//     PR_SET_NO_NEW_PRIVS and a filter returning 0 for prctl, inherited by brokerd and the
//     host): under such a filter both programs refuse to run. Nor do they run inside a user
//     namespace other than the system's own (red-team round 4 made one with 'unshare -Ur'):
//     its owner can ptrace whatever runs in it, undumpable or not.
//   - [MemoryOpen] asks the kernel whether this process may open another's /proc/PID/mem; for
//     an unprivileged caller of the same user, "no" means no process of that user may. The
//     host asks it of every browser process before a release and before typing, brokerd of a
//     pinentry before a passphrase is typed into it.
//   - [NotReplaceable] refuses, for a user other than root, a program the user could modify
//     or replace; brokerd and the doctor refuse such a Chromium or pinentry with it.
//   - [Facts] reports, for a doctor: whether this process is undumpable, the kernel's Yama
//     ptrace_scope ("absent" on a kernel without Yama), and for each of headless's binaries
//     whether a process of the current user could replace it (a user-writable host binary
//     can be swapped for anything by any same-user program; root-owned binaries in a
//     root-owned directory cannot).
//
// # Not guaranteed
//
// Between exec and the prctl call (microseconds) the process is dumpable: a same-user
// process racing for that window can attach to it. Yama's ptrace_scope ≥ 2 (or 3) closes
// it for everyone but root; a kernel without Yama cannot. Root is never kept out. On other
// systems Undumpable does nothing and Facts says so.
package hardening

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// BinaryFact says whether the current user could replace one of headless's binaries.
type BinaryFact struct {
	Path         string `json:"path"`
	UserWritable bool   `json:"user_writable"`
	Reason       string `json:"reason,omitempty"` // why it is (or could not be checked)
}

// Report is what a doctor shows about this process and its binaries.
type Report struct {
	Undumpable  bool         `json:"undumpable"`
	PtraceScope string       `json:"ptrace_scope"` // "0".."3", "absent", or "unknown"
	Binaries    []BinaryFact `json:"binaries,omitempty"`
}

// Facts reports this process's dumpable state, the kernel's ptrace_scope and the binaries'
// writability.
func Facts(binaries ...string) Report {
	r := Report{PtraceScope: PtraceScope()}
	if d, err := Dumpable(); err == nil {
		r.Undumpable = !d
	}
	for _, b := range binaries {
		r.Binaries = append(r.Binaries, Binary(b))
	}
	return r
}

// Unconfined says why a process of the current user could trace (or read the memory of) any
// other process of that user, headless's own included, from its start: "" when it could not.
// Undumpability keeps a process out only once it is set; a process that starts brokerd under
// its own tracer (PTRACE_TRACEME) keeps register control through the exec and the prctl, and
// can make brokerd dumpable again by itself (red-team round 10 did, and read the passphrase
// and the password going through it). Only Yama's ptrace_scope 2 or 3 keeps every non-root
// process from tracing at all. Root is never kept out of anything, so for root it is "".
func Unconfined() string {
	if os.Getuid() == 0 {
		return ""
	}
	switch s := PtraceScope(); s {
	case "2", "3":
		return ""
	case "absent":
		return "the kernel has no Yama, so any program of yours can trace brokerd from its start and read what goes through it"
	default:
		return "kernel.yama.ptrace_scope is " + s + ", so a program of yours can trace brokerd from its start (as its parent) and read what goes through it"
	}
}

// PtraceScope reads /proc/sys/kernel/yama/ptrace_scope: "absent" when the kernel has no Yama.
func PtraceScope() string {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	switch {
	case os.IsNotExist(err):
		return "absent"
	case err != nil:
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// Binary checks whether the current user could modify or replace the file at path: it or
// its directory is owned by the current user, or is writable by group or others (a
// directory with the sticky bit and another owner excepted).
func Binary(path string) BinaryFact { return binaryFor(path, uint32(os.Getuid())) }

// binaryFor is [Binary] for the user uid.
func binaryFor(path string, uid uint32) BinaryFact {
	f := BinaryFact{Path: path}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		f.UserWritable, f.Reason = true, "cannot be checked: "+err.Error()
		return f
	}
	var dst syscall.Stat_t
	dir := filepath.Dir(path)
	if err := syscall.Stat(dir, &dst); err != nil {
		f.UserWritable, f.Reason = true, "its directory cannot be checked: "+err.Error()
		return f
	}
	switch why := dirReason(dir, &dst, uid); {
	case st.Uid == uid:
		f.UserWritable, f.Reason = true, "owned by you: any program running as you can replace it"
	case st.Mode&0o022 != 0:
		f.UserWritable, f.Reason = true, "writable by group or others"
	case why != "":
		f.UserWritable, f.Reason = true, why
	default:
		f.Reason = "owned by uid " + itoa(st.Uid) + " in a directory you cannot write"
	}
	return f
}

func itoa(u uint32) string {
	if u == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return string(b[i:])
}

// CheckChromium checks the Chromium executable at path the way brokerd does before it
// releases a password to a host that launches it: a regular, executable ELF file (not a
// wrapper script, which could log what it is given or exec something else), not writable by
// group or others, and — for a user other than root — one no process of the user can modify
// or replace (NotReplaceable: root-owned, in a directory only root can write). It reads the file's first bytes and runs nothing.
// A file the user may execute but not read (Chromium installed mode 0711, so that its processes
// are undumpable) has no first bytes to read, and needs none: a script cannot run from it, as
// its interpreter could not read it either.
func CheckChromium(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("chromium %q is not an absolute path", path)
	}
	elf := true
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrPermission) {
		elf = false
		f, err = openPath(path)
	}
	if err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	defer f.Close()
	if err := CheckExecutable(f, path, elf); err != nil {
		return err
	}
	return NotReplaceable(path)
}

// NotReplaceable refuses a program that a process of the current user could modify or replace
// ([Binary]), unless the current user is root (whom nothing keeps out). A program a password
// or passphrase goes into — Chromium, the pinentry — must be one the agent's shell cannot
// swap for a wrapper of its own: red-team round 8, with a config and a brokerd of its own,
// ran Chromium through its own ELF wrapper adding a network log (the sign-in's POST in it)
// and relayed the pinentry through another (the passphrase in its log).
func NotReplaceable(path string) error { return notReplaceableBy(path, uint32(os.Getuid())) }

// dirReason says why the user uid could put another file in place of one in dir (stat dst):
// dir is theirs, or writable by group or others without the sticky bit; "" when neither.
func dirReason(dir string, dst *syscall.Stat_t, uid uint32) string {
	switch {
	case dst.Uid == uid:
		return "its directory " + dir + " is yours: any program running as you can put another file in its place"
	case dst.Mode&0o022 != 0 && dst.Mode&syscall.S_ISVTX == 0:
		return "its directory " + dir + " is writable by group or others"
	}
	return ""
}

// DirReplaceable reports whether the user uid could rename or replace entries of dir (as
// [Binary] judges a binary's directory). Root can everywhere; a dir that cannot be looked at
// counts as replaceable.
func DirReplaceable(dir string, uid uint32) bool {
	var st syscall.Stat_t
	if uid == 0 || syscall.Stat(dir, &st) != nil {
		return true
	}
	return dirReason(dir, &st, uid) != ""
}

// notReplaceableBy is [NotReplaceable] for the user uid.
func notReplaceableBy(path string, uid uint32) error {
	if uid == 0 {
		return nil
	}
	if f := binaryFor(path, uid); f.UserWritable {
		return fmt.Errorf("%s is %s", path, f.Reason)
	}
	return nil
}

// CheckExecutable checks an open executable: a regular, executable file owned by the user or
// root, not writable by group or others, and with elf an ELF file.
func CheckExecutable(f *os.File, path string, elf bool) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return fmt.Errorf("%s is not a regular file", path)
	case st.Mode&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%s is writable by group or others (mode %04o)", path, st.Mode&0o7777)
	case st.Uid != 0 && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s is owned by uid %d, neither you nor root", path, st.Uid)
	}
	if elf {
		magic := make([]byte, 4)
		if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != "\x7fELF" {
			return fmt.Errorf("%s is not an ELF executable (a script or wrapper is refused)", path)
		}
	}
	return nil
}
