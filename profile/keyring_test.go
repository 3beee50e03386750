//go:build linux

package profile

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/realtest"
	"github.com/headless-dev/headless/vault"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCheckKeyringWithoutBus(t *testing.T) {
	ctx := testCtx(t, 10*time.Second)
	for _, addr := range []string{
		"",
		"autolaunch:",
		"unix:path=" + t.TempDir() + "/no-bus",
		"unix:path=/nonexistent/bus;autolaunch:",
	} {
		if err := CheckKeyring(ctx, addr); !errors.Is(err, vault.ErrUnavailable) {
			t.Errorf("CheckKeyring(%q) = %v; want ErrUnavailable", addr, err)
		}
	}
}

func TestCheckKeyring(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	t.Run("Unlocked", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		if err := CheckKeyring(ctx, k.Addr); err != nil {
			t.Fatalf("CheckKeyring on an unlocked keyring: %v", err)
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
		err = CheckKeyring(ctx, k.Addr)
		if !errors.Is(err, vault.ErrLocked) || errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("CheckKeyring on a locked keyring: %v; want ErrLocked", err)
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
		if err := CheckKeyring(ctx, k.Addr); !errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("CheckKeyring without a default collection: %v; want ErrUnavailable", err)
		}
	})
	t.Run("KeyringGoneThenBusGone", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		c := busConn(t, k.Addr)
		if err := CheckKeyring(ctx, k.Addr); err != nil {
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
		if err := CheckKeyring(ctx, k.Addr); !errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("CheckKeyring with the keyring gone: %v; want ErrUnavailable", err)
		}
		if err := syscall.Kill(k.BusPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := CheckKeyring(ctx, k.Addr)
			if errors.Is(err, vault.ErrUnavailable) && !c.Connected() {
				break
			}
			if !errors.Is(err, vault.ErrUnavailable) || time.Now().After(deadline) {
				t.Fatalf("CheckKeyring with the bus gone: %v (bus connected: %v); want ErrUnavailable", err, c.Connected())
			}
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := CheckKeyring(cctx, k.Addr); !errors.Is(err, context.Canceled) {
			t.Fatalf("CheckKeyring with a canceled context: %v", err)
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
