//go:build linux && amd64

package tests

// Red-team round 3 made brokerd and the host dumpable without any race: a seccomp filter,
// installed by the agent before it execs headless, answers prctl(PR_SET_DUMPABLE) and
// prctl(PR_GET_DUMPABLE) with 0 without running them, and is inherited by everything headless
// starts. Both programs now ask the kernel's /proc instead, and refuse to run.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// seccompExec (a helper: HEADLESS_TEST_HELPER=seccompexec) installs the attacker's filter and
// execs SECCOMP_EXEC (a program and its arguments, space-separated).
func seccompExec() int {
	runtime.LockOSThread()
	const (
		ldAbs   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
		allow   = 0x7fff0000 // SECCOMP_RET_ALLOW
		errno0  = 0x00050000 // SECCOMP_RET_ERRNO with errno 0: "success", without running it
		archX86 = 0xc000003e // AUDIT_ARCH_X86_64
	)
	filter := []unix.SockFilter{
		{Code: ldAbs, K: 4},                                // 0: arch
		{Code: jeq, K: archX86, Jt: 0, Jf: 5},              // 1: not x86-64 → allow
		{Code: ldAbs, K: 0},                                // 2: nr
		{Code: jeq, K: unix.SYS_PRCTL, Jt: 0, Jf: 3},       // 3: not prctl → allow
		{Code: ldAbs, K: 16},                               // 4: args[0], low word
		{Code: jeq, K: unix.PR_SET_DUMPABLE, Jt: 2, Jf: 0}, // 5: → fake
		{Code: jeq, K: unix.PR_GET_DUMPABLE, Jt: 1, Jf: 0}, // 6: → fake
		{Code: ret, K: allow},                              // 7
		{Code: ret, K: errno0},                             // 8: fake
	}
	// Jumps are relative: fix the "→ allow" ones to land on 7.
	filter[1].Jf = 7 - 2
	filter[3].Jf = 7 - 4
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "no_new_privs:", err)
		return 3
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, 1 /* SECCOMP_SET_MODE_FILTER */, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomp:", e)
		return 3
	}
	argv := strings.Fields(os.Getenv("SECCOMP_EXEC"))
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintln(os.Stderr, "exec:", err)
	return 3
}

func testUndumpableRefusedUnderAFakingSeccompFilter(t *testing.T) {
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	root, err := os.MkdirTemp("", "headless-seccomp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever a refusal that did not happen started (a brokerd --auto) goes too.
		for _, pid := range processesFrom(root) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(root)
	})
	os.Chmod(root, 0o755)
	self, _ := os.Executable()
	for src, dst := range map[string]string{filepath.Join(binDir, "brokerd"): "brokerd", filepath.Join(binDir, "headless"): "headless", self: "attacker"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeExecutable(filepath.Join(root, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(root, "home")
	os.Mkdir(home, 0o700)
	os.Chown(home, 65534, 65534)
	run := func(filtered bool, argv ...string) (string, int) {
		// Bounded: a brokerd that is not refused serves until it is killed.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var cmd *exec.Cmd
		env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_RUNTIME_DIR=" + home, "LANG=C.UTF-8"}
		if filtered {
			cmd = exec.CommandContext(ctx, filepath.Join(root, "attacker"))
			env = append(env, helperEnv+"=seccompexec", "SECCOMP_EXEC="+strings.Join(argv, " "))
		} else {
			cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		}
		cmd.Env = env
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: nobody}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), exitCode(t, err)
	}
	// The filter is in force in what it execs (the control: the test can fail).
	st, code := run(true, "/bin/cat", "/proc/self/status")
	if code != 0 || !strings.Contains(st, "NoNewPrivs:\t1") || !strings.Contains(st, "Seccomp:\t2") {
		t.Fatalf("the attacker's filter is not in force (%d): %s", code, st)
	}
	// Unfiltered, both programs run as uid 65534.
	if out, code := run(false, filepath.Join(root, "headless"), "version"); code != 0 {
		t.Fatalf("headless version as nobody: %d %s", code, out)
	}
	// In a user namespace of the user's own they run, but get no group and so no key and no
	// host: that is TestAsUser65534/BoundaryNamespacedBrokerd's (brokerd there is BROKER_UNTRUSTED and
	// releases nothing), not a check of /proc/self/uid_map, which a mount can cover.
	// Filtered, both refuse to run at all.
	for _, argv := range [][]string{{filepath.Join(root, "headless"), "version"}, {filepath.Join(root, "headless"), "start"}, {filepath.Join(root, "brokerd")}} {
		out, code := run(true, argv...)
		if code == 0 || !strings.Contains(out, "dumpable") {
			t.Errorf("%v under a filter that fakes prctl: exit %d, %q; want a refusal naming dumpability", argv, code, out)
		}
	}
}
