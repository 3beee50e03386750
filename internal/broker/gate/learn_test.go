package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/wire"
)

// TestEchoSeenIsAudited: the host's echo.seen is one audit record (op "echo", the output in
// Detail); from any other process it is PEER_NOT_HOST and recorded nowhere; out-of-bounds
// fields are INVALID_ARGUMENT.
func TestEchoSeenIsAudited(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	p := brokerapi.EchoSeenParams{Session: "s1", Origin: "https://app.example", Output: "snapshot"}
	notHost := brokerapi.NewClient(f.connAs(t, Peer{PID: 778, Exe: "/usr/bin/agent"}))
	if err := notHost.EchoSeen(ctx, p); code(err) != wire.CodePeerNotHost {
		t.Fatalf("echo.seen from another process: %v", err)
	}
	if n := len(f.audit.records()); n != 0 {
		t.Fatalf("%d records of a refused echo.seen", n)
	}
	if err := c.EchoSeen(ctx, p); err != nil {
		t.Fatal(err)
	}
	recs := f.audit.records()
	if len(recs) != 1 || recs[0].Op != "echo" || recs[0].Decision != "ok" || recs[0].Session != "s1" || recs[0].Origin != "https://app.example" ||
		recs[0].Detail != "snapshot" || recs[0].PID != 777 {
		t.Fatalf("records %+v", recs)
	}
	for name, bad := range map[string]brokerapi.EchoSeenParams{
		"no output":       {Session: "s1", Output: ""},
		"long output":     {Session: "s1", Output: strings.Repeat("o", maxEchoOutput+1)},
		"control output":  {Session: "s1", Output: "snap\nshot"},
		"long session":    {Session: strings.Repeat("s", 65), Output: "snapshot"},
		"control session": {Session: "s\x00", Output: "snapshot"},
		"long origin":     {Session: "s1", Origin: "https://" + strings.Repeat("a", auditwriter.MaxField), Output: "snapshot"},
	} {
		if err := c.EchoSeen(ctx, bad); code(err) != wire.CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if n := len(f.audit.records()); n != 1 {
		t.Fatalf("%d records after refused reports", n)
	}
	// An answer about no session (or one the caller named wrongly) is audited all the same.
	for _, session := range []string{"", "../x"} {
		if err := c.EchoSeen(ctx, brokerapi.EchoSeenParams{Session: session, Output: "status"}); err != nil {
			t.Fatalf("echo.seen of session %q: %v", session, err)
		}
		if rec := lastRecord(t, f); rec.Op != "echo" || rec.Session != session || rec.Detail != "status" {
			t.Fatalf("record %+v", rec)
		}
	}
}

// TestEgressRefusedIsAudited: the host's egress.refused is one audit record (op "egress",
// code SECRET_EGRESS, where the request was going and what carried it); from any other
// process it is PEER_NOT_HOST and recorded nowhere.
func TestEgressRefusedIsAudited(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	p := brokerapi.EgressRefusedParams{Session: "s1", Origin: "https://app.example", Destination: "https://evil.example/collect", Carrier: "its body"}
	notHost := brokerapi.NewClient(f.connAs(t, Peer{PID: 778, Exe: "/usr/bin/agent"}))
	if err := notHost.EgressRefused(ctx, p); code(err) != wire.CodePeerNotHost {
		t.Fatalf("egress.refused from another process: %v", err)
	}
	if n := len(f.audit.records()); n != 0 {
		t.Fatalf("%d records of a refused report", n)
	}
	c := f.client(t)
	if err := c.EgressRefused(ctx, p); err != nil {
		t.Fatal(err)
	}
	rec := lastRecord(t, f)
	if rec.Op != "egress" || rec.Decision != "error" || rec.Code != string(wire.CodeSecretEgress) || rec.Session != "s1" ||
		rec.Origin != "https://app.example" || rec.Detail != "https://evil.example/collect (its body)" {
		t.Fatalf("record %+v", rec)
	}
	for name, bad := range map[string]brokerapi.EgressRefusedParams{
		"no destination":      {Session: "s1", Carrier: "its URL"},
		"control destination": {Session: "s1", Destination: "https://e\n", Carrier: "its URL"},
		"long carrier":        {Session: "s1", Destination: "https://e", Carrier: strings.Repeat("c", auditwriter.MaxField+1)},
	} {
		if err := c.EgressRefused(ctx, bad); code(err) != wire.CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
}
