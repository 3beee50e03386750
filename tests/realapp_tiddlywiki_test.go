//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestRealAppTiddlyWikiBasic: TiddlyWiki 5 on Node.js (npm), a wiki server with HTTP Basic of
// its own: every request of the realm needs the user's Authorization, the page's own script
// (served apart, $:/core/save/all-external-js) and the API the page calls next (/status, which
// tells the page who is signed in, and the tiddler store). The user is in the server's
// credentials file, as TiddlyWiki's documentation has it (a CSV, password in clear). The agent
// answers the Basic challenge of the page by alias. Proof by TiddlyWiki: the wiki's first page
// renders "Signed in as USER." from $:/status/UserName, which only the server's /status answer
// sets, after the script it loaded under the same realm ran.
func TestRealAppTiddlyWikiBasic(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, mod := appModule(t, "tiddlywiki")
	dir := t.TempDir()
	wiki := filepath.Join(dir, "wiki")
	tw := func(args ...string) *exec.Cmd {
		cmd := exec.Command(node, append([]string{filepath.Join(mod, "tiddlywiki.js"), wiki}, args...)...)
		cmd.Dir = dir
		return cmd
	}
	if out, err := tw("--init", "server").CombinedOutput(); err != nil {
		t.Fatalf("tiddlywiki --init server: %v: %s", err, out)
	}
	// The wiki's first page says who the server says is signed in.
	os.MkdirAll(filepath.Join(wiki, "tiddlers"), 0o700)
	for name, body := range map[string]string{
		"Signed-in check.tid":    "title: Signed-in check\n\nSigned in as <$text text={{$:/status/UserName}}/>.\n",
		"$__DefaultTiddlers.tid": "title: $:/DefaultTiddlers\n\n[[Signed-in check]]\n",
	} {
		if err := os.WriteFile(filepath.Join(wiki, "tiddlers", name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const account = "wikiwarden"
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	users := filepath.Join(dir, "users.csv")
	if err := os.WriteFile(users, []byte("username,password\n"+account+","+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	app := startApp(t, "TiddlyWiki", port, "/status", tw("--listen", "host=127.0.0.1", "port="+strconv.Itoa(port),
		"credentials="+users, "readers=(authenticated)", "writers=(authenticated)", "root-tiddler=$:/core/save/all-external-js"))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, app.origin, "wiki", account, pw)
	e.start(t)
	visited := appVisit(t, e, app.URL("/"), "")
	if visited.AuthRequired == nil || visited.AuthRequired.Kind != "basic" {
		t.Fatalf("the wiki's page: auth_required %+v, want TiddlyWiki's Basic challenge", visited.AuthRequired)
	}
	appLogin(t, e, visited, "wiki")

	// TiddlyWiki's answer: its script ran and its /status said who is signed in.
	appShows(t, e, "Signed in as "+account+".")
}
