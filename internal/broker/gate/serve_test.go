package gate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/test/realtest"
	"github.com/headless-dev/headless/internal/wire"
)

// dialEnv makes this test binary act as a bare client (used to connect as another uid).
const dialEnv = "HEADLESS_BROKER_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(dialEnv); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("DIAL-ERROR", err)
			os.Exit(0)
		}
		io.WriteString(c, `{"id":1,"method":"credentials.list"}`+"\n")
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		fmt.Printf("REPLY %s", line)
		if err != nil {
			fmt.Println("READ-ERROR", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveUnix runs f's server on a real socket and returns its path.
func serveUnix(t *testing.T, f *fixture) (dir, sock string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "broker-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	sock = filepath.Join(dir, "broker.sock")
	l, err := safesock.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, l, os.Getuid()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return dir, sock
}

func TestSocketIsPrivate(t *testing.T) {
	f := newFixture(t)
	_, sock := serveUnix(t, f)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket mode %v", fi.Mode())
	}
	c, err := brokerapi.Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Version(context.Background())
	if err != nil || v.Protocol != brokerapi.Protocol || v.PID != 4242 {
		t.Fatalf("version %+v %v", v, err)
	}
}

// TestOtherUIDRefused opens the directory and socket to everyone so that only the SO_PEERCRED
// check stands between uid 65534 and the broker.
func TestOtherUIDRefused(t *testing.T) {
	realtest.NeedRoot(t, "connect as uid 65534")
	f := newFixture(t)
	dir, sock := serveUnix(t, f)
	os.Chmod(dir, 0o755)
	os.Chmod(sock, 0o666)

	bin, err := os.MkdirTemp("", "broker-peer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bin)
	os.Chmod(bin, 0o755)
	exe := filepath.Join(bin, "client")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(uid uint32) string {
		cmd := exec.Command(exe)
		cmd.Env = []string{dialEnv + "=" + sock}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client as uid %d: %v\n%s", uid, err, out)
		}
		return string(out)
	}
	out := run(65534)
	if !strings.HasPrefix(out, "REPLY ") {
		t.Fatalf("uid 65534 could not even reach the socket, so the test proves nothing: %s", out)
	}
	var r wire.Response
	if err := json.Unmarshal([]byte(strings.TrimPrefix(out, "REPLY ")), &r); err != nil || r.Error == nil || r.Error.Code != wire.CodePeerRefused {
		t.Fatalf("uid 65534 got %q, want PEER_REFUSED", out)
	}
	// The same client as root is served (so the refusal above is about the uid).
	out = run(0)
	if !strings.Contains(out, `"credentials"`) {
		t.Fatalf("root client: %s", out)
	}
}

// TestConnectionLimit: at the limit, a new connection is served in the place of the longest
// idle one, which gets BUSY (package rpc has the rest: in-flight and pinned connections stay).
func TestConnectionLimit(t *testing.T) {
	f := newFixture(t)
	f.srv.MaxConns = 2
	_, sock := serveUnix(t, f)
	ctx := context.Background()
	var held []*brokerapi.Client
	for i := 0; i < 2; i++ {
		c, err := brokerapi.Dial(ctx, sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Version(ctx); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The server marks a connection idle once its answer is written, which can come after the
	// client has read it: held[1] is used once more, later, so that it is surely the less idle
	// of the two (without this the eviction picked held[1] about once in 30 race runs).
	time.Sleep(20 * time.Millisecond)
	if _, err := held[1].Version(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := brokerapi.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Version(ctx); err != nil {
		t.Fatalf("third connection: %v, want served", err)
	}
	// Its next call does not take the eviction's BUSY for its answer: the connection is gone
	// (BROKER_UNAVAILABLE, unreachable: a caller that redials does).
	if _, err := held[0].Version(ctx); wire.CodeOf(err) != wire.CodeBrokerUnavail || !errors.Is(err, rpc.ErrUnreachable) ||
		!strings.Contains(err.Error(), "closed this connection while it was idle (BUSY") {
		t.Fatalf("the longest idle connection after the third came: %v, want unreachable naming the eviction", err)
	}
	if _, err := held[1].Version(ctx); err != nil {
		t.Fatalf("the other held connection: %v", err)
	}
}
