//go:build linux

package keyprobe

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/test/realtest"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCheckWithoutBus(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	for _, addr := range []string{
		"",
		"autolaunch:",
		"unix:path=" + t.TempDir() + "/no-bus",
		"unix:path=/nonexistent/bus;autolaunch:",
	} {
		if err := Check(ctx, addr); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Check(%q) = %v; want ErrUnavailable", addr, err)
		}
	}
}

func TestCheck(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	t.Run("Unlocked", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		if err := Check(ctx, k.Addr); err != nil {
			t.Fatalf("Check on an unlocked keyring: %v", err)
		}
	})
	t.Run("Locked", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		c := busConn(t, k.Addr)
		coll := readAlias(t, c)
		var locked []dbus.ObjectPath
		var prompt dbus.ObjectPath
		err := c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
			Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{coll}).Store(&locked, &prompt)
		if err != nil || prompt != "/" || len(locked) != 1 {
			t.Fatalf("Lock = %v %v, %v", locked, prompt, err)
		}
		err = Check(ctx, k.Addr)
		if !errors.Is(err, ErrLocked) || errors.Is(err, ErrUnavailable) {
			t.Fatalf("Check on a locked keyring: %v; want ErrLocked", err)
		}
	})
	t.Run("NoDefaultCollection", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		c := busConn(t, k.Addr)
		// gnome-keyring answers the login collection for "default" until it is deleted.
		var prompt dbus.ObjectPath
		err := c.Object("org.freedesktop.secrets", readAlias(t, c)).
			Call("org.freedesktop.Secret.Collection.Delete", 0).Store(&prompt)
		if err != nil || prompt != "/" {
			t.Fatalf("delete the default collection: %v %v", prompt, err)
		}
		if err := Check(ctx, k.Addr); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Check without a default collection: %v; want ErrUnavailable", err)
		}
	})
	t.Run("KeyringGoneThenBusGone", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		c := busConn(t, k.Addr)
		if err := Check(ctx, k.Addr); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(k.KeyringPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var has bool
			if err := c.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&has); err != nil {
				t.Fatal(err)
			}
			if !has {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the keyring still owns its name 10s after SIGTERM")
			}
		}
		if err := Check(ctx, k.Addr); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Check with the keyring gone: %v; want ErrUnavailable", err)
		}
		if err := syscall.Kill(k.BusPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := Check(ctx, k.Addr)
			if errors.Is(err, ErrUnavailable) && !c.Connected() {
				break
			}
			if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
				t.Fatalf("Check with the bus gone: %v (bus connected: %v); want ErrUnavailable", err, c.Connected())
			}
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := Check(cctx, k.Addr); !errors.Is(err, context.Canceled) {
			t.Fatalf("Check with a canceled context: %v", err)
		}
	})
}

// busConn is the test's own connection to the keyring's bus.
func busConn(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	c, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to test bus: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readAlias(t *testing.T, c *dbus.Conn) dbus.ObjectPath {
	t.Helper()
	var coll dbus.ObjectPath
	err := c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.ReadAlias", 0, "default").Store(&coll)
	if err != nil || coll == "/" {
		t.Fatalf("ReadAlias(default) = %q, %v", coll, err)
	}
	return coll
}

func TestSessionBusAddress(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	if _, err := SessionBusAddress(env(nil)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("empty env: %v; want ErrUnavailable", err)
	}
	got, err := SessionBusAddress(env(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x/bus"}))
	if err != nil || got != "unix:path=/x/bus" {
		t.Fatalf("DBUS_SESSION_BUS_ADDRESS: %q, %v", got, err)
	}
	for _, a := range []string{"autolaunch:", "autolaunch:scope=*user", "unix:path=/nonexistent;autolaunch:", "launchd:env=X"} {
		if got, err := SessionBusAddress(env(map[string]string{"DBUS_SESSION_BUS_ADDRESS": a})); err == nil {
			t.Errorf("DBUS_SESSION_BUS_ADDRESS=%q: returned %q, want an error", a, got)
		} else if !errors.Is(err, ErrUnavailable) {
			t.Errorf("DBUS_SESSION_BUS_ADDRESS=%q: %v; want ErrUnavailable", a, err)
		}
	}

	dir, err := os.MkdirTemp("", "keyprobe xdg,=") // characters that need escaping
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if _, err := SessionBusAddress(env(map[string]string{"XDG_RUNTIME_DIR": dir})); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("XDG_RUNTIME_DIR without bus: %v; want ErrUnavailable", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := SessionBusAddress(env(map[string]string{"XDG_RUNTIME_DIR": dir})); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("XDG_RUNTIME_DIR/bus not a socket: %v; want ErrUnavailable", err)
	}
	os.Remove(filepath.Join(dir, "bus"))
	l, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err = SessionBusAddress(env(map[string]string{"XDG_RUNTIME_DIR": dir}))
	if err != nil || !strings.HasPrefix(got, "unix:path=") {
		t.Fatalf("XDG_RUNTIME_DIR/bus: %q, %v", got, err)
	}
	if path, _ := dbus.UnescapeBusAddressValue(strings.TrimPrefix(got, "unix:path=")); path != filepath.Join(dir, "bus") {
		t.Fatalf("XDG_RUNTIME_DIR/bus: address %q names %q", got, path)
	}
	// The env variable wins; autolaunch falls through to the runtime dir.
	got, _ = SessionBusAddress(env(map[string]string{"XDG_RUNTIME_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "autolaunch:"}))
	if !strings.HasPrefix(got, "unix:path=") {
		t.Fatalf("autolaunch + XDG_RUNTIME_DIR: %q", got)
	}
}

// TestSessionBusAddressOnlyUnix: the bus address reaches Chromium, whose D-Bus library would
// start the program of a unixexec: address (red-team round 11): only one unix address is used.
func TestSessionBusAddressOnlyUnix(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the session bus is Linux's")
	}
	for addr, ok := range map[string]bool{
		"unix:path=/run/user/1000/bus":                                       true,
		"unix:path=/tmp/wss.x/bus,guid=abbb4da246704e4bf337":                 true,
		"unix:abstract=/tmp/dbus-XYZ,guid=00":                                true,
		"unixexec:path=/home/a/bin/dx,argv0=dx;unix:path=/run/user/1000/bus": false,
		"unix:path=/run/user/1000/bus;unixexec:path=/home/a/bin/dx":          false,
		"tcp:host=127.0.0.1,port=4444":                                       false,
		"unix:path=/a,abstract=/b":                                           false,
		"unix:runtime=yes":                                                   false,
		"unix:path=/a,noncefile=/b":                                          false,
	} {
		got, err := SessionBusAddress(func(k string) string {
			if k == "DBUS_SESSION_BUS_ADDRESS" {
				return addr
			}
			return ""
		})
		if ok && (err != nil || got != addr) {
			t.Errorf("%q: %q %v; want it used", addr, got, err)
		}
		if !ok && (err == nil || !errors.Is(err, ErrUnavailable) || got != "") {
			t.Errorf("%q: %q %v; want ErrUnavailable", addr, got, err)
		}
	}
}
