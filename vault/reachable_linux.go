package vault

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Reachable reports whether the Secret Service on the session bus at addr can serve a client
// right now: it answers nil only when org.freedesktop.secrets has an owner, the collection
// with alias "default" exists, and that collection is unlocked. Otherwise it returns an error
// wrapping ErrUnavailable (no address, an autolaunch address, no bus, no service, no default
// collection) or ErrLocked (the default collection is locked).
//
// It connects privately to addr (never an autolaunched bus), opens no session and reads no
// secret. Like libsecret, it lets the bus start an activatable service; a service started that
// way normally comes up locked, which answers ErrLocked. The answer is a snapshot: the
// collection can be locked or the service can exit right after Reachable returns.
func Reachable(ctx context.Context, addr string) error {
	if addr == "" {
		return fmt.Errorf("secret service: %w: no session bus address", ErrUnavailable)
	}
	if isAutolaunch(addr) {
		return fmt.Errorf("secret service: %w: refusing an autolaunch bus address", ErrUnavailable)
	}
	conn, err := dbus.Dial(addr)
	if err != nil {
		return &ssError{step: "connect to session bus", kind: ErrUnavailable, err: err}
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
		return &ssError{step: "authenticate to session bus", kind: ErrUnavailable, err: err}
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
	if coll == noPrompt || coll == "" {
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
