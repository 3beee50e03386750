// Package hardening closes the doors a same-user process has into headless's own processes,
// with what the kernel enforces for a user at any Yama ptrace_scope, and reports the facts a
// doctor needs to say which doors stay open.
//
// # Security contract
//
//   - An identity only root grants: brokerd is installed root-owned and set-gid to
//     [BrokerGroup], the headless binary to [HostGroup] (scripts/install.sh, the .deb). A
//     set-gid exec is undumpable from its first instruction, and the kernel does not grant the
//     group to an exec under a tracer, under no_new_privs, on a nosuid mount, or inside a user
//     namespace that leaves root unmapped — so brokerd started any of those ways cannot read
//     the seal key ([KeyPath], package internal/broker/seal), and a host started so is not genuine
//     (package hostproc compares the kernel's SO_PEERCRED gid). [Granted], [DropGroup],
//     [TakeGroup] and [SetGIDTo] are the pieces; no check reads a /proc file a mount could cover
//     to decide trust. [StateDir] is the one directory only that group may search: brokerd
//     keeps there what no process of the user may write ([CheckStateDir]).
//   - [Undumpable] (prctl(PR_SET_DUMPABLE, 0)), called first in every headless and brokerd
//     process, then checks that the kernel agrees (a non-dumpable process's /proc/PID files
//     belong to root) rather than trusting prctl's answer, which a seccomp filter can fake.
//   - [MemoryOpen] asks the kernel whether this process may open another's /proc/PID/mem;
//     [MemoryOpenAs] asks it with the user's own gid as filesystem gid, which is what a process
//     of the user that lacks headless's groups may open. The host asks it of every browser
//     process before a release and before typing, brokerd of a pinentry before a passphrase.
//   - [NotReplaceable] refuses, for a user other than root, a program the user could modify
//     or replace; brokerd and the doctor refuse such a Chromium or pinentry with it.
//   - [Facts] reports, for a doctor: whether this process is undumpable, the kernel's Yama
//     ptrace_scope (informational: nothing depends on it), and for each of headless's binaries
//     whether a process of the current user could replace it.
//
// # Not guaranteed
//
// Root, and any member of headless's groups, is kept out of nothing. Processes that share the
// host group (the headless CLI, the host, Chromium, the pinentry) are not kept from each
// other by the kernel: they run only root-installed code. On other systems the Linux pieces
// do nothing and Facts says so.
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
