// Command fakepinentry is a scripted pinentry for tests. It speaks real Assuan on stdin and
// stdout: it greets "OK Pleased to meet you", answers OK to OPTION and SET* commands, and
// answers CONFIRM according to -mode:
//
//	approve       OK
//	deny          ERR 83886179 Operation cancelled <Pinentry>
//	notconfirmed  ERR 83886194 Not confirmed <Pinentry>
//	timeout       ERR 83886142 Timeout <Pinentry>
//	hang          never answers; ignores SIGTERM. Before it greets, it starts a child (mode
//	              sleeper, same process group, holding stdout open) that sleeps forever,
//	              also ignoring SIGTERM, and logs "<pid> child <child pid>".
//	crash         exits with status 2 without answering
//	garbage       a line of random non-protocol bytes, then keeps reading
//	gate          OK once the file <log>.gate exists (polled), so a test can hold a prompt open
//
// GETPIN is answered with a passphrase from the file <log>.pin, or from <log>.pins one line per
// GETPIN, in every mode that does not fail CONFIRM (see getpin); without one it is cancelled.
//
// And, before CONFIRM:
//
//	nogreeting    exits at once without a word
//	biggreeting   greets with a 100 KiB line
//	errsetup      answers SETDESC with ERR 83886179
//
// Every received line is appended to the -log file as "<pid> recv <line>", after a
// "<pid> start <mode>" line, one "<pid> env NAME=VALUE" line for each of DISPLAY,
// WAYLAND_DISPLAY, XAUTHORITY and DBUS_SESSION_BUS_ADDRESS that is set in its environment (so a
// test sees where the prompt would have appeared), and "<pid> child <pid>" for hang. It is a
// test stand-in only: nothing in production refers to it.
package main

import (
	"bufio"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		// Started with no arguments (as brokerd's shim starts a pinentry): its flags are in
		// PROGRAM.args, one per line, beside it.
		if b, err := os.ReadFile(os.Args[0] + ".args"); err == nil {
			args = strings.Fields(string(b))
		}
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

var modes = map[string]bool{
	"approve": true, "deny": true, "notconfirmed": true, "timeout": true, "hang": true,
	"crash": true, "garbage": true, "gate": true, "switch": true, "nogreeting": true, "biggreeting": true,
	"errsetup": true, "sleeper": true,
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakepinentry", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "approve", "how to answer (see the package doc)")
	logPath := fs.String("log", "", "append every received line to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !modes[*mode] {
		fmt.Fprintf(stderr, "fakepinentry: unknown mode %q\n", *mode)
		return 2
	}
	logf := func(event, data string) {}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "fakepinentry: %v\n", err)
			return 2
		}
		defer f.Close()
		pid := os.Getpid()
		logf = func(event, data string) {
			f.Write([]byte(fmt.Sprintf("%d %s %s\n", pid, event, data))) // one write: O_APPEND keeps lines whole
		}
	}
	logf("start", *mode)
	for _, k := range []string{"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"} {
		if v, ok := os.LookupEnv(k); ok {
			logf("env", k+"="+v)
		}
	}

	switch *mode {
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		sleepForever()
	case "hang":
		signal.Ignore(syscall.SIGTERM)
		startSleeper(*logPath, stdout, logf)
		fmt.Fprintln(stdout, "OK Pleased to meet you")
	case "nogreeting":
		return 0
	case "biggreeting":
		fmt.Fprintf(stdout, "OK %s\n", strings.Repeat("A", 100<<10))
	default:
		fmt.Fprintln(stdout, "OK Pleased to meet you")
	}

	in := bufio.NewReader(stdin)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return 0
		}
		line = strings.TrimSuffix(line, "\n")
		logf("recv", line)
		verb, _, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "BYE":
			fmt.Fprintln(stdout, "OK closing connection")
			return 0
		case "SETDESC":
			if *mode == "errsetup" {
				fmt.Fprintln(stdout, "ERR 83886179 Operation cancelled <Pinentry>")
				continue
			}
			fmt.Fprintln(stdout, "OK")
		case "OPTION", "SETTITLE", "SETPROMPT", "SETOK", "SETCANCEL", "SETNOTOK", "SETERROR",
			"SETTIMEOUT", "SETKEYINFO", "SETREPEAT", "NOP", "RESET":
			fmt.Fprintln(stdout, "OK")
		case "CONFIRM":
			if code := confirm(*mode, *logPath, stdout, logf); code >= 0 {
				return code
			}
		case "GETPIN":
			if code := getpin(*mode, *logPath, stdout, logf); code >= 0 {
				return code
			}
		default:
			fmt.Fprintln(stdout, "ERR 83886355 Unknown IPC command <Pinentry>")
		}
	}
}

// confirm answers CONFIRM; a result >= 0 is an exit status.
func confirm(mode, logPath string, stdout io.Writer, logf func(event, data string)) int {
	switch mode {
	case "deny":
		fmt.Fprintln(stdout, "ERR 83886179 Operation cancelled <Pinentry>")
	case "notconfirmed":
		fmt.Fprintln(stdout, "ERR 83886194 Not confirmed <Pinentry>")
	case "timeout":
		fmt.Fprintln(stdout, "ERR 83886142 Timeout <Pinentry>")
	case "hang":
		sleepForever()
	case "crash":
		return 2
	case "garbage":
		b := make([]byte, 64)
		rand.Read(b)
		b[0] = 0xff // never a valid line, whatever follows
		for i := range b {
			if b[i] == '\n' {
				b[i] = 0xfe
			}
		}
		stdout.Write(append(b, '\n'))
	case "gate":
		for {
			if _, err := os.Stat(logPath + ".gate"); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Fprintln(stdout, "OK")
	case "switch":
		// The person changes their mind between prompts: a test flips the files. While
		// ".hold" exists the person has not answered yet.
		for {
			if _, err := os.Stat(logPath + ".hold"); err != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := os.Stat(logPath + ".deny"); err == nil {
			fmt.Fprintln(stdout, "ERR 83886179 Operation cancelled <Pinentry>")
		} else {
			fmt.Fprintln(stdout, "OK")
		}
	default: // approve, biggreeting, errsetup
		fmt.Fprintln(stdout, "OK")
	}
	return -1
}

// getpin answers GETPIN. In the modes that fail CONFIRM (deny, notconfirmed, timeout, hang,
// crash, garbage) it fails the same way; in gate it first waits as CONFIRM does. Otherwise the
// person types the content of the file <log>.pin (without a final newline), or, while the file
// <log>.pins exists, its next line at each GETPIN (a test scripting several tries), sent
// percent-escaped in a D line; with neither file there is nothing to type, and the prompt is
// cancelled. A result >= 0 is an exit status. The passphrase is never logged.
func getpin(mode, logPath string, stdout io.Writer, logf func(event, data string)) int {
	switch mode {
	case "deny", "notconfirmed", "timeout", "hang", "crash", "garbage":
		return confirm(mode, logPath, stdout, logf)
	case "gate":
		confirm(mode, logPath, io.Discard, logf)
	}
	pin, ok := nextPin(logPath)
	if !ok {
		fmt.Fprintln(stdout, "ERR 83886179 Operation cancelled <Pinentry>")
		return -1
	}
	var b strings.Builder
	for i := 0; i < len(pin); i++ {
		c := pin[i]
		if c == '%' || c < 0x20 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	fmt.Fprintf(stdout, "S PROGRESS typed\nD %s\nOK\n", b.String())
	return -1
}

// nextPin is what the person types at this GETPIN (see getpin).
func nextPin(logPath string) (string, bool) {
	if logPath == "" {
		return "", false
	}
	if b, err := os.ReadFile(logPath + ".pins"); err == nil {
		first, rest, _ := strings.Cut(string(b), "\n")
		if first != "" {
			if os.WriteFile(logPath+".pins", []byte(rest), 0o600) != nil {
				return "", false
			}
			return first, true
		}
		os.Remove(logPath + ".pins") // used up: the last passphrase, in <log>.pin, from now on
	}
	b, err := os.ReadFile(logPath + ".pin")
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(string(b), "\n"), true
}

// startSleeper starts a child in mode sleeper that keeps stdout open, as a careless helper
// process of a real pinentry could.
func startSleeper(logPath string, stdout io.Writer, logf func(event, data string)) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	args := []string{"-mode", "sleeper"}
	if logPath != "" {
		args = append(args, "-log", logPath)
	}
	child := exec.Command(exe, args...)
	child.Stdout = stdout
	if child.Start() == nil {
		logf("child", fmt.Sprint(child.Process.Pid))
	}
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}
