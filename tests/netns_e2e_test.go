//go:build linux

package tests

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// netnsSiteEnv makes TestNetnsSiteHelper serve a login site (run inside the namespace).
const netnsSiteEnv = "HEADLESS_TEST_NETNS_SITE"

// TestNetnsSiteHelper is the login site of TestNoUnrequestedTraffic, run by it inside its
// network namespace: it reads the account's password from stdin, prints the site's origin,
// and serves until stdin closes.
func TestNetnsSiteHelper(t *testing.T) {
	parallel(t)
	if os.Getenv(netnsSiteEnv) != "1" {
		t.Skip("run by TestNoUnrequestedTraffic inside its network namespace")
	}
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	ls := newLoginSite(t)
	ls.SetAccount("alice@example.test", strings.TrimSuffix(line, "\n"))
	fmt.Println(ls.Origin())
	io.Copy(io.Discard, in)
}

// ns runs a command in network namespace name and returns its output.
func nsRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("in %s: %v: %v: %s", name, args, err, out)
	}
	return string(out)
}

// sent is the number of packets sent out of the namespace's sink interface.
func sent(t *testing.T, ns string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(nsRun(t, ns, "cat", "/sys/class/net/sink0/statistics/tx_packets")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNoUnrequestedTraffic: brokerd, the host and Chromium run in a network namespace of the
// test's own whose one way out (a default route for IPv4 and IPv6, to a dummy interface that
// counts what it is given: a veth whose other end is in a second namespace) leads nowhere. Over an idle minute with the host started, a
// sign-in to a loopback site (inside the namespace), and a stop, not one packet is sent out:
// no DNS lookup, prefetch, connectivity probe, update, safe-browsing, metrics or component
// fetch — only what the pages' own navigations cause, and they are all on loopback (issue
// 30: while idle, Chromium resolved names and probed [2001:4860:4860::8888]:443 despite
// --disable-background-networking). The sink is shown to count a packet first.
func TestNoUnrequestedTraffic(t *testing.T) {
	parallel(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a network namespace, which needs root (CI runs as root)")
	}
	b := make([]byte, 4)
	rand.Read(b)
	ns := "hltest-" + hex.EncodeToString(b)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	// The sink: one end of a veth pair whose other end is in a second namespace of the test's
	// own, up and with no address (what reaches it goes no further).
	far := ns + "-far"
	if out, err := exec.Command("ip", "netns", "add", far).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", far).Run() })
	if out, err := exec.Command("ip", "link", "add", "sink0", "netns", ns, "type", "veth", "peer", "name", "far0", "netns", far).CombinedOutput(); err != nil {
		t.Fatalf("ip link add veth: %v: %s", err, out)
	}
	nsRun(t, far, "ip", "link", "set", "far0", "up")
	// No router solicitations from the kernel as the link comes up.
	nsRun(t, ns, "sysctl", "-q", "-w", "net.ipv6.conf.sink0.router_solicitations=0")
	for _, c := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "link", "set", "sink0", "up"},
		{"ip", "addr", "add", "198.51.100.1/24", "dev", "sink0"},
		{"ip", "neigh", "add", "198.51.100.254", "lladdr", "02:00:00:00:00:fe", "dev", "sink0"},
		{"ip", "route", "add", "default", "via", "198.51.100.254", "dev", "sink0"},
		{"ip", "-6", "addr", "add", "2001:db8::1/64", "dev", "sink0", "nodad"},
		{"ip", "-6", "neigh", "add", "2001:db8::fe", "lladdr", "02:00:00:00:00:fe", "dev", "sink0"},
		{"ip", "-6", "route", "add", "default", "via", "2001:db8::fe", "dev", "sink0"},
	} {
		nsRun(t, ns, c...)
	}
	// The link's own chatter as it comes up (IPv6 router solicitations, MLD reports) is
	// over, and none follows: the kernel sends no more solicitations.
	time.Sleep(3 * time.Second)
	// The sink counts: one UDP datagram to an address out there is one packet.
	before := sent(t, ns)
	nsRun(t, ns, "bash", "-c", "echo probe > /dev/udp/192.0.2.7/53")
	if got := sent(t, ns) - before; got != 1 {
		t.Fatalf("the sink counted %d packets for one datagram", got)
	}

	e := newEnv(t, envOptions{})
	e.netns = ns
	canary := newCanary()
	site := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^TestNetnsSiteHelper$", "-test.count=1")
	site.Env = append(os.Environ(), netnsSiteEnv+"=1")
	stdin, _ := site.StdinPipe()
	stdout, _ := site.StdoutPipe()
	site.Stderr = os.Stderr
	if err := site.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); site.Wait() })
	fmt.Fprintln(stdin, canary)
	origin, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(origin, "http://127.0.0.1:") {
		t.Fatalf("the site in the namespace: %q, %v", origin, err)
	}
	origin = strings.TrimSpace(origin)

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 10)
	start := sent(t, ns)
	lsEnroll(t, e, origin, "main", "alice@example.test", canary)
	e.start(t)
	time.Sleep(time.Minute) // idle
	lsVisit(t, e, origin+"/login")
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	e.ok(t, nil, "snapshot")
	e.ok(t, nil, "stop")
	time.Sleep(2 * time.Second) // what a stopping browser would still send
	if n := sent(t, ns) - start; n != 0 {
		t.Errorf("%d packets left the namespace unasked; sockets now:\n%s", n, nsRun(t, ns, "ss", "-tuanp"))
	}
	if strings.Contains(e.allOutput(), canary) {
		t.Error("the password is in an output")
	}
}
