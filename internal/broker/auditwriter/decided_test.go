package auditwriter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headless-dev/headless/audit"
)

// agentFlood appends what an agent can make without the person, as a hostile review did: adds
// and removes (broker.sock under the pinentry provider, an isolated session's add), refusals
// (PEER_NOT_HOST), and prompts it withdrew.
func agentFlood(t *testing.T, l *Log, pairs, refusals int) {
	t.Helper()
	for i := range pairs {
		for _, op := range []string{"add", "remove"} {
			if err := l.Append(Record{Op: op, Decision: "ok", Origin: "http://127.0.0.1:18462", Alias: fmt.Sprintf("flood%d", i), PID: 66}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range refusals {
		for _, r := range []Record{{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", Alias: "refused", PID: 66},
			{Op: "release", Decision: "deny", Code: "CANCELLED", Alias: "refused", PID: 66}} {
			if err := l.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// inFiles reports whether any file of the log at path holds alias's release.
func inFiles(t *testing.T, path, alias string) bool {
	t.Helper()
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"alias":"`+alias+`"`) {
			return true
		}
	}
	return false
}

// TestReleaseOutlivesRotation (issue 46, F1): a release the person allowed, then 8 add/remove
// pairs and a flood of refusals until the release's generation (and every "kept" copy of it)
// rotated out. The check still names the release, from what brokerd keeps apart, and says which
// records rotated out; more floods of every kind the agent can make never displace it.
func TestReleaseOutlivesRotation(t *testing.T) {
	w := newKeyedWorld(t)
	o := w.opts()
	o.MaxBytes, o.Keep = 32<<10, 2
	l := openT(t, o)
	if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "site", Origin: "http://127.0.0.1:18462", Provider: "pinentry", PID: 42}); err != nil {
		t.Fatal(err)
	}
	agentFlood(t, l, 8, 0)
	for i := 0; inFiles(t, logPath(w.data), "site"); i++ {
		if i > 400 {
			t.Fatal("the release never rotated out")
		}
		agentFlood(t, l, 0, 5)
	}
	// Then more of everything an agent makes, and 100 denials at the prompt (a kind of their
	// own: an agent that kills the prompt makes them).
	agentFlood(t, l, 100, 100)
	for range 100 {
		if err := l.Append(Record{Op: "release", Decision: "deny", Code: "PRESENCE_DENIED", Alias: "denied", PID: 42}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := w.check(t)
	if err != nil || !rep.Intact {
		t.Fatalf("Check = %+v, %v; want intact (rotation is no tampering)", rep, err)
	}
	if rep.RotatedOut == nil || rep.RotatedOut.From != 1 || rep.RotatedOut.To != rep.First-1 || rep.First < 2 {
		t.Fatalf("RotatedOut = %+v (first %d); want records 1-%d named as rotated out", rep.RotatedOut, rep.First, rep.First-1)
	}
	i := slices.IndexFunc(rep.Decided, func(r audit.Record) bool { return r.Op == "release" && r.Decision == "allow" })
	if i < 0 || rep.Decided[i].Seq != 1 || rep.Decided[i].Alias != "site" || rep.Decided[i].Origin != "http://127.0.0.1:18462" {
		t.Fatalf("Decided = %+v; want the release of record 1 (site) named after it rotated out", rep.Decided)
	}
	for _, r := range rep.Decided {
		if audit.DecidedKind(r) == "" || r.Seq >= rep.First {
			t.Fatalf("Decided holds %+v: not a person's decision the log no longer holds", r)
		}
	}
	denied := 0
	for _, r := range rep.Decided {
		if r.Code == "PRESENCE_DENIED" {
			denied++
		}
	}
	kept, err := w.anchors.Decided(l.path)
	if err != nil || len(kept) != 1+audit.MaxDecided || denied > audit.MaxDecided {
		t.Fatalf("brokerd keeps %d decisions (%v); want the release and the newest %d denials", len(kept), err, audit.MaxDecided)
	}
}

// TestElsewhereNotDisplaced (issue 46, F2): a release through a brokerd the agent started with
// a data dir of its own stays named by the check of the person's log, whatever the person's log
// then holds (its own releases and adds, any number), after the agent deletes its log, and after
// it makes more logs than brokerd anchors (whose pruning would take the release's anchor).
func TestElsewhereNotDisplaced(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 1)
	other := keyedWorld{data: t.TempDir(), anchors: w.anchors}
	lo := openT(t, other.opts())
	if err := lo.Append(Record{Op: "release", Decision: "allow", Alias: "elsewhere", PID: 7}); err != nil {
		t.Fatal(err)
	}
	lo.Close()
	agentFlood(t, l, 100, 10)
	appendN(t, l, 2*audit.MaxDecided)
	named := func(what string) {
		t.Helper()
		rep, err := w.check(t)
		if err != nil || !rep.Intact || !slices.ContainsFunc(rep.Elsewhere, func(p audit.Placed) bool {
			return p.Record.Alias == "elsewhere" && p.Log == logPath(other.data) && p.Record.Seq == 1
		}) {
			t.Fatalf("%s: Check = %+v, %v; want the release in the other log named", what, rep.Elsewhere, err)
		}
		for _, p := range rep.Elsewhere {
			if p.Log == logPath(w.data) {
				t.Fatalf("%s: Elsewhere names this log's own record %+v", what, p)
			}
		}
	}
	named("after the person's log grew")
	if err := os.RemoveAll(other.data); err != nil {
		t.Fatal(err)
	}
	named("after the other log was deleted")
	var made int
	for made = 0; made < maxAnchors+2; made++ {
		x := keyedWorld{data: filepath.Join(t.TempDir(), "d"), anchors: w.anchors}
		lx, err := Open(x.opts())
		if err != nil {
			break
		}
		if err := lx.Append(Record{Op: "add", Decision: "ok", Alias: "x"}); err != nil {
			lx.Close()
			break
		}
		lx.Close()
		os.RemoveAll(x.data) // prunable: its directory is gone, and it keeps no decision
	}
	if made < maxAnchors {
		t.Fatalf("only %d new logs were anchored: anchors of deleted logs without decisions should be pruned", made)
	}
	named("after more logs than brokerd anchors")
}

// TestDecidedKinds: what only the person's answer makes, and nothing an agent makes alone.
func TestDecidedKinds(t *testing.T) {
	for _, c := range []struct {
		r    Record
		kind string
	}{
		{Record{Op: "release", Decision: "allow"}, "release/allow"},
		{Record{Op: "release", Decision: "deny", Code: "PRESENCE_DENIED"}, "release/deny/PRESENCE_DENIED"},
		{Record{Op: "release", Decision: "deny", Code: "PRESENCE_TIMEOUT"}, "release/deny/PRESENCE_TIMEOUT"},
		{Record{Op: "file_add", Decision: "allow"}, "file_add/allow"},
		{Record{Op: "handover", Decision: "done"}, "handover/done"},
		{Record{Op: "handover", Decision: "declined"}, "handover/declined"},
		{Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST"}, ""},
		{Record{Op: "release", Decision: "deny", Code: "CANCELLED"}, ""},
		{Record{Op: "handover", Decision: "error", Code: "NO_WINDOW"}, ""},
		{Record{Op: "add", Decision: "ok"}, ""},
		{Record{Op: "remove", Decision: "ok"}, ""},
		{Record{Op: "file_remove", Decision: "ok"}, ""},
		{Record{Op: "kept", Decision: "allow"}, ""},
		{Record{Op: "learn_path", Decision: "ok"}, ""},
	} {
		if got := audit.DecidedKind(c.r); got != c.kind {
			t.Errorf("DecidedKind(%s/%s/%s) = %q; want %q", c.r.Op, c.r.Decision, c.r.Code, got, c.kind)
		}
	}
}

// TestAnchorsMakeRoom: with every anchor taken, a new log still opens when a log that keeps no
// decision of the person's can lose its anchor (any process can make such logs), and then when
// the oldest log whose directory is gone can (only the person's own decisions fill every slot);
// never by taking the anchor of a log still there that keeps a decision.
func TestAnchorsMakeRoom(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "kept", PID: 7}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	var gone []string
	for i := 1; i < maxAnchors; i++ { // logs with a decision, then deleted (tests' worlds)
		x := keyedWorld{data: filepath.Join(t.TempDir(), "d"), anchors: w.anchors}
		lx := openT(t, x.opts())
		if err := lx.Append(Record{Op: "release", Decision: "allow", Alias: "x", PID: 7}); err != nil {
			t.Fatal(err)
		}
		lx.Close()
		os.RemoveAll(x.data)
		gone = append(gone, x.data)
	}
	for i := 0; i < 3; i++ { // full: the oldest deleted one goes, each time
		x := keyedWorld{data: filepath.Join(t.TempDir(), "d"), anchors: w.anchors}
		lx, err := Open(x.opts())
		if err != nil {
			t.Fatalf("new log %d with every anchor taken by deleted logs: %v", i, err)
		}
		if err := lx.Append(Record{Op: "release", Decision: "allow", Alias: "y", PID: 7}); err != nil {
			t.Fatal(err)
		}
		lx.Close()
	}
	kept, err := w.anchors.Decided(logPath(w.data))
	if err != nil || len(kept) != 1 {
		t.Fatalf("the person's own log, still there, lost its decisions: %v %v", kept, err)
	}
}

// TestElsewhereBounded: the check lists at most audit.MaxElsewhere decisions of other logs,
// and counts the logs and those it leaves out; an agent's flood of prompts it let time out, in
// logs of its own made after the release, does not push the release out of the list.
func TestElsewhereBounded(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 1)
	l.Close()
	other := keyedWorld{data: t.TempDir(), anchors: w.anchors}
	lo := openT(t, other.opts())
	if err := lo.Append(Record{Op: "release", Decision: "allow", Alias: "released", PID: 7}); err != nil {
		t.Fatal(err)
	}
	lo.Close()
	const logs, each = 5, audit.MaxDecided
	for range logs {
		x := keyedWorld{data: t.TempDir(), anchors: w.anchors}
		lx := openT(t, x.opts())
		for range each {
			if err := lx.Append(Record{Op: "release", Decision: "deny", Code: "PRESENCE_TIMEOUT", Alias: "timeout", PID: 66}); err != nil {
				t.Fatal(err)
			}
		}
		lx.Close()
	}
	rep, err := w.check(t)
	if err != nil || !rep.Intact {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
	if len(rep.Elsewhere) != audit.MaxElsewhere || rep.ElsewhereLogs != logs+1 || rep.ElsewhereOmitted != logs*each+1-audit.MaxElsewhere {
		t.Fatalf("Elsewhere: %d listed, %d logs, %d omitted; want %d, %d, %d", len(rep.Elsewhere), rep.ElsewhereLogs, rep.ElsewhereOmitted,
			audit.MaxElsewhere, logs+1, logs*each+1-audit.MaxElsewhere)
	}
	if !slices.ContainsFunc(rep.Elsewhere, func(p audit.Placed) bool { return p.Record.Alias == "released" && p.Log == logPath(other.data) }) {
		t.Fatalf("the release in the other log is not listed: %+v", rep.Elsewhere)
	}
	if !slices.IsSortedFunc(rep.Elsewhere, func(x, y audit.Placed) int { return x.Record.Time.Compare(y.Record.Time) }) {
		t.Fatal("Elsewhere is not oldest first")
	}
	b, _ := json.Marshal(audit.Outcome{Report: rep})
	t.Logf("the report: %d bytes", len(b))
}

// TestFilesOf: the files FilesOf names are the anchor and the decisions brokerd made for the
// log, and all it made for it (the end-to-end suite removes its worlds' by them).
func TestFilesOf(t *testing.T) {
	root := t.TempDir()
	a, err := OpenAnchors(root, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	data, err := filepath.EvalSymlinks(t.TempDir()) // brokerd anchors a log by its real path
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Path: logPath(data), Key: testKey, Anchors: a, Now: clock()}
	l := openT(t, o)
	if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "site", Origin: "http://127.0.0.1:18462", Provider: "pinentry", PID: 42}); err != nil {
		t.Fatal(err)
	}
	files := FilesOf(root, os.Getuid(), logPath(data))
	made, _ := filepath.Glob(filepath.Join(root, fmt.Sprint(os.Getuid()), "audit", "log-*"))
	slices.Sort(files)
	slices.Sort(made)
	if len(files) != 2 || !slices.Equal(files, made) {
		t.Fatalf("FilesOf = %q; brokerd made %q", files, made)
	}
}
