package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/credential"
)

// completionScript writes shell's script into a temp dir and returns its path.
func completionScript(t *testing.T, shell, name string) string {
	t.Helper()
	var b strings.Builder
	if err := Completion(&b, shell); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// need finds a shell the tests need (scripts/test.sh installs bash, zsh and fish): a missing
// one fails the test, never skips it.
func need(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		t.Fatalf("%s is not installed (scripts/test.sh installs it): %v", shell, err)
	}
	return p
}

// TestCompletionBash: the bash script loads and completes a command, a group's subcommand and
// a flag of the command typed. No headless on PATH: --session completes to nothing.
func TestCompletionBash(t *testing.T) {
	bash := need(t, "bash")
	script := completionScript(t, "bash", "headless.bash")
	complete := func(words ...string) []string {
		t.Helper()
		var arr []string
		for _, w := range words {
			arr = append(arr, "'"+w+"'")
		}
		prog := "source " + script + "; COMP_WORDS=(" + strings.Join(arr, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; _headless; printf '%s\\n' \"${COMPREPLY[@]}\""
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = []string{"PATH=/nonexistent"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash %v: %v: %s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("headless", "snap"); !slices.Equal(got, []string{"snapshot"}) {
		t.Errorf("headless snap<TAB>: %q", got)
	}
	if got := complete("headless", "session", "cr"); !slices.Equal(got, []string{"create"}) {
		t.Errorf("headless session cr<TAB>: %q", got)
	}
	if got := complete("headless", "session", "create", "x", "--iso"); !slices.Equal(got, []string{"--isolated"}) {
		t.Errorf("headless session create x --iso<TAB>: %q", got)
	}
	if got := complete("headless", "auth", "login", "--new"); !slices.Equal(got, []string{"--new-login-path"}) {
		t.Errorf("headless auth login --new<TAB>: %q", got)
	}
	if got := complete("headless", "visit", "--session", ""); len(got) != 0 {
		t.Errorf("--session with no host: %q", got)
	}
}

// TestCompletionZsh: the zsh script (as compinit would autoload it) offers the same, with
// compadd stubbed to print what it is given.
func TestCompletionZsh(t *testing.T) {
	zsh := need(t, "zsh")
	script := completionScript(t, "zsh", "_headless")
	complete := func(words ...string) []string {
		t.Helper()
		var arr []string
		for _, w := range words {
			arr = append(arr, "'"+w+"'")
		}
		prog := "compadd() { [[ $1 == -- ]] && shift; print -l -- \"$@\" }; words=(" + strings.Join(arr, " ") + "); CURRENT=" + strconv.Itoa(len(words)) + "; source " + script
		cmd := exec.Command(zsh, "-f", "-c", prog)
		cmd.Env = []string{"PATH=/nonexistent"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh %v: %v: %s", words, err, out)
		}
		var got []string
		for _, w := range strings.Fields(string(out)) {
			if strings.HasPrefix(w, words[len(words)-1]) {
				got = append(got, w)
			}
		}
		return got
	}
	if got := complete("headless", "snap"); !slices.Equal(got, []string{"snapshot"}) {
		t.Errorf("headless snap<TAB>: %q", got)
	}
	if got := complete("headless", "auth", "login", "--new"); !slices.Equal(got, []string{"--new-login-path"}) {
		t.Errorf("headless auth login --new<TAB>: %q", got)
	}
}

// TestCompletionFish: fish's own completer (complete --do-complete) with the script loaded.
func TestCompletionFish(t *testing.T) {
	fish := need(t, "fish")
	script := completionScript(t, "fish", "headless.fish")
	complete := func(line string) []string {
		t.Helper()
		cmd := exec.Command(fish, "--no-config", "-c", "source "+script+"; complete --do-complete='"+line+"'")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish %q: %v: %s", line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				got = append(got, f[0])
			}
		}
		return got
	}
	if got := complete("headless snap"); !slices.Equal(got, []string{"snapshot"}) {
		t.Errorf("headless snap<TAB>: %q", got)
	}
	if got := complete("headless auth login --new"); !slices.Equal(got, []string{"--new-login-path"}) {
		t.Errorf("headless auth login --new<TAB>: %q", got)
	}
}

// TestCompletionNames: what __complete prints reaches bash's compgen -W, which expands $(…)
// and backticks: only names of headless's own forms pass, whatever the sockets answered.
func TestCompletionNames(t *testing.T) {
	got := completionNames([]string{"main", "staging-admin", "$(touch${IFS}/tmp/x)", "`id`", "a b", "ok.1_x", "x;y", ""}, credential.ValidAlias)
	if !slices.Equal(got, []string{"main", "staging-admin", "ok.1_x"}) {
		t.Errorf("completion names: %q", got)
	}
}
