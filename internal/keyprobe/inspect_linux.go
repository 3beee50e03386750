package keyprobe

import (
	"context"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"
)

// systemPrompter is the bus name gnome-keyring shows its prompts through (gcr-prompter).
const systemPrompter = "org.gnome.keyring.SystemPrompter"

// Inspect looks at the Secret Service on the session bus at addr for a doctor, read-only
// (see the package documentation: no session, no secret, nothing changed, no prompt): whether
// the service answers and its default collection is unlocked (what [Check] answers), whether
// the dedicated collection labelled label exists, how many do, whether it is locked, whether
// gnome-keyring stores its password for automatic unlock, and whether the keyring's system
// prompter runs or can be started by the bus. err is set only when the bus or the service
// cannot be reached at all; the other answers are in the Inspection.
func Inspect(ctx context.Context, addr, label string) (Inspection, error) {
	var in Inspection
	in.Default = Check(ctx, addr)
	if addr == "" || IsAutolaunch(addr) {
		return in, in.Default
	}
	conn, err := dbus.Dial(addr)
	if err != nil {
		return in, &busError{step: "connect to session bus", kind: ErrUnavailable, err: err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := conn.Auth(nil); err != nil {
		return in, &busError{step: "authenticate to session bus", kind: ErrUnavailable, err: err}
	}
	if err := conn.Hello(); err != nil {
		return in, &busError{step: "say hello to session bus", kind: ErrUnavailable, err: err}
	}
	bus := conn.BusObject()
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, systemPrompter).Store(&in.PrompterRunning); err != nil {
		return in, busErr("look for the system prompter", err)
	}
	var names []string
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
		return in, busErr("list activatable names", err)
	}
	in.PrompterActivatable = slices.Contains(names, systemPrompter)
	var has bool
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, ssName).Store(&has); err != nil {
		return in, busErr("look for the secret service", err)
	}
	if !has && !slices.Contains(names, ssName) {
		return in, &busError{step: "look for the secret service", kind: ErrUnavailable, err: errNoService}
	}
	svc := conn.Object(ssName, ssPath)
	var v dbus.Variant
	if err := svc.CallWithContext(ctx, ifProps+".Get", 0, ifService, "Collections").Store(&v); err != nil {
		return in, busErr("list collections", err)
	}
	colls, _ := v.Value().([]dbus.ObjectPath)
	var found []dbus.ObjectPath
	for _, p := range colls {
		var lv dbus.Variant
		if err := conn.Object(ssName, p).CallWithContext(ctx, ifProps+".Get", 0, ifCollection, "Label").Store(&lv); err != nil {
			continue // deleted meanwhile
		}
		if l, _ := lv.Value().(string); l == label {
			found = append(found, p)
		}
	}
	in.Keyrings = len(found)
	if len(found) != 1 {
		return in, nil
	}
	coll := found[0]
	if err := conn.Object(ssName, coll).CallWithContext(ctx, ifProps+".Get", 0, ifCollection, "Locked").Store(&v); err != nil {
		return in, busErr("read Locked", err)
	}
	in.Locked, _ = v.Value().(bool)
	// gnome-keyring 42 files a stored auto-unlock password under the keyring's location in the
	// login keyring; the item is hidden from the API, but a search finds it.
	id := string(coll)[strings.LastIndexByte(string(coll), '/')+1:]
	var unlocked, locked []dbus.ObjectPath
	if err := svc.CallWithContext(ctx, ifService+".SearchItems", 0,
		map[string]string{"keyring": "LOCAL:/keyrings/" + id + ".keyring"}).Store(&unlocked, &locked); err != nil {
		return in, busErr("search auto-unlock password", err)
	}
	in.AutoUnlockStored = len(unlocked)+len(locked) > 0
	return in, nil
}
