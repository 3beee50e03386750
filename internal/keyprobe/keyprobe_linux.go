package keyprobe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
)

// SessionBusAddress returns the address of the user's session bus, using getenv (os.Getenv
// in production) to read the environment: DBUS_SESSION_BUS_ADDRESS when it is set, else
// unix:path=$XDG_RUNTIME_DIR/bus when that socket exists, else an error wrapping
// ErrUnavailable. It never returns an autolaunch: address and never starts a bus.
func SessionBusAddress(getenv func(string) string) (string, error) {
	if addr := getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && !IsAutolaunch(addr) {
		if err := CheckAddress(addr); err != nil {
			return "", fmt.Errorf("find session bus: %w: DBUS_SESSION_BUS_ADDRESS: %v", ErrUnavailable, err)
		}
		return addr, nil
	}
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" && strings.HasPrefix(dir, "/") {
		path := strings.TrimRight(dir, "/") + "/bus"
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + dbus.EscapeBusAddressValue(path), nil
		}
	}
	return "", fmt.Errorf("find session bus: %w: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist", ErrUnavailable)
}

// CheckAddress accepts one unix:path= or unix:abstract= address (with an optional guid) and
// nothing else. The address reaches Chromium, which runs with the headless group, and its D-Bus
// library tries every address of a list in turn: a "unixexec:path=PROGRAM" first in the list
// made Chromium start a program of the agent's with the group, as its own child, which read a
// typed password out of the browser's memory (red-team round 11, F4); tcp: and the rest
// reach other places than the user's own bus.
func CheckAddress(addr string) error {
	rest, ok := strings.CutPrefix(addr, "unix:")
	if !ok || strings.Contains(addr, ";") {
		return errors.New("only a single unix:path= or unix:abstract= address is used (other transports, like unixexec:, start programs or leave the machine)")
	}
	where := 0
	for _, kv := range strings.Split(rest, ",") {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "path", "abstract":
			where++
		case "guid":
		default:
			return fmt.Errorf("unix address key %.20q is not used (only path, abstract and guid)", k)
		}
	}
	if where != 1 {
		return errors.New("a unix address needs exactly one of path= and abstract=")
	}
	return nil
}

// D-Bus names Check uses.
const (
	ssName       = "org.freedesktop.secrets"
	ssPath       = dbus.ObjectPath("/org/freedesktop/secrets")
	ifService    = "org.freedesktop.Secret.Service"
	ifCollection = "org.freedesktop.Secret.Collection"
	ifProps      = "org.freedesktop.DBus.Properties"
	errIsLocked  = "org.freedesktop.Secret.Error.IsLocked"
)

// Check reports whether the Secret Service on the session bus at addr can serve Chromium's
// cookie key right now; see the package documentation.
func Check(ctx context.Context, addr string) error {
	if addr == "" {
		return fmt.Errorf("secret service: %w: no session bus address", ErrUnavailable)
	}
	if IsAutolaunch(addr) {
		return fmt.Errorf("secret service: %w: refusing an autolaunch bus address", ErrUnavailable)
	}
	conn, err := dbus.Dial(addr)
	if err != nil {
		return &busError{step: "connect to session bus", kind: ErrUnavailable, err: err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	err = conn.Auth(nil)
	if err == nil {
		err = conn.Hello()
	}
	if !stop() {
		return fmt.Errorf("connect to session bus: %w", ctx.Err())
	}
	if err != nil {
		return &busError{step: "authenticate to session bus", kind: ErrUnavailable, err: err}
	}
	var coll dbus.ObjectPath
	err = conn.Object(ssName, ssPath).CallWithContext(ctx, ifService+".ReadAlias", 0, "default").Store(&coll)
	if err != nil {
		return busErr("read collection alias", err)
	}
	var owner string
	err = conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, ssName).Store(&owner)
	if err != nil {
		return busErr("find secret service owner", err)
	}
	if coll == "/" || coll == "" {
		return fmt.Errorf("read collection alias: %w: the secret service has no default collection", ErrUnavailable)
	}
	var v dbus.Variant
	err = conn.Object(owner, coll).CallWithContext(ctx, ifProps+".Get", 0, ifCollection, "Locked").Store(&v)
	if err != nil {
		return busErr("read Locked", err)
	}
	locked, ok := v.Value().(bool)
	if !ok {
		return fmt.Errorf("read Locked: %w: unexpected type %s", ErrUnavailable, v.Signature())
	}
	if locked {
		return fmt.Errorf("default collection: %w", ErrLocked)
	}
	return nil
}

// busErr classifies the error of a call made for step: the caller's deadline or cancellation
// as it is, the service's IsLocked as ErrLocked, anything else as ErrUnavailable.
func busErr(step string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", step, err)
	}
	e := &busError{step: step, kind: ErrUnavailable, err: err}
	var de dbus.Error
	if errors.As(err, &de) && de.Name == errIsLocked {
		e.kind = ErrLocked
	}
	return e
}

// busError is a classified failure: kind is ErrUnavailable or ErrLocked, err what the bus said.
type busError struct {
	step string
	kind error
	err  error
}

func (e *busError) Error() string {
	msg := e.err.Error()
	var de dbus.Error
	if errors.As(e.err, &de) && de.Name != msg {
		msg = de.Name + ": " + msg
	}
	return e.step + ": " + e.kind.Error() + ": " + msg
}

func (e *busError) Unwrap() []error { return []error{e.kind, e.err} }
