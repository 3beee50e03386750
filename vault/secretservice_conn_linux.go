package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// The connection: one private D-Bus connection with its DH session, opened lazily, shared by
// every call, reopened after the bus or the service went away, and the classification of what
// the bus answers (ErrUnavailable, ErrLocked, ErrAliasUnknown; retry or reconnect).

// acquire returns the current connection, connecting when there is none. fresh reports that
// the connection was made by this call. The caller must release it.
func (s *SecretService) acquire(ctx context.Context) (c *ssConn, fresh bool, err error) {
	if c, err := s.current(); c != nil || err != nil {
		return c, false, err
	}
	select {
	case s.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("connect to secret service: %w", ctx.Err())
	}
	defer func() { <-s.dialing }()
	if c, err := s.current(); c != nil || err != nil {
		return c, false, err
	}
	nc, err := dialSecretService(ctx, s.addr, s.alias, s.label, s.rand)
	if err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.destroy()
		return nil, false, errClosed
	}
	s.cur = nc
	nc.refs++
	s.mu.Unlock()
	return nc, true, nil
}

var errClosed = fmt.Errorf("secret service: %w: store is closed", ErrUnavailable)

// current returns the live connection with a reference taken, or nil.
func (s *SecretService) current() (*ssConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	c := s.cur
	if c == nil {
		return nil, nil
	}
	if !c.conn.Connected() {
		s.cur = nil
		c.dead = true
		if c.refs == 0 {
			go c.destroy()
		}
		return nil, nil
	}
	c.refs++
	return c, nil
}

// release drops a reference taken by acquire; the last reference to a dead connection
// destroys it.
func (s *SecretService) release(c *ssConn) {
	s.mu.Lock()
	c.refs--
	last := c.dead && c.refs == 0
	s.mu.Unlock()
	if last {
		c.destroy()
	}
}

// invalidate marks c unusable so the next call reconnects.
func (s *SecretService) invalidate(c *ssConn) {
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
	}
	wasDead := c.dead
	c.dead = true
	last := !wasDead && c.refs == 0
	s.mu.Unlock()
	if last {
		c.destroy()
	}
}

// do runs fn on a live connection. When fn fails because the connection or the service went
// away and the request cannot have been processed, it reconnects and runs fn once more.
func (s *SecretService) do(ctx context.Context, fn func(c *ssConn) error) error {
	for attempt := 0; ; attempt++ {
		c, fresh, err := s.acquire(ctx)
		if err != nil {
			return err
		}
		if s.label != "" && c.coll == "" && !fresh {
			// The dedicated collection was missing when this connection was made; it may
			// exist now (created by a late-answered prompt, or by another program).
			if p, ferr := c.findLabel(ctx, s.label); ferr == nil && p != "" {
				s.invalidate(c)
				s.release(c)
				if c, _, err = s.acquire(ctx); err != nil {
					return err
				}
			}
		}
		err = fn(c)
		var se *ssError
		isSE := errors.As(err, &se)
		if isSE && se.drop {
			s.invalidate(c)
		}
		s.release(c)
		if isSE && se.retry && !fresh && attempt == 0 && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// dialSecretService connects to the bus, opens a DH session and resolves the collection.
func dialSecretService(ctx context.Context, addr, alias, label string, random io.Reader) (_ *ssConn, err error) {
	conn, err := dbus.Dial(addr)
	if err != nil {
		return nil, &ssError{step: "connect to session bus", kind: ErrUnavailable, err: err}
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	err = conn.Auth(nil)
	if err == nil {
		err = conn.Hello()
	}
	if !stop() {
		return nil, fmt.Errorf("connect to session bus: %w", ctx.Err())
	}
	if err != nil {
		return nil, &ssError{step: "authenticate to session bus", kind: ErrUnavailable, err: err}
	}

	// The first call on a new connection is a ReadAlias whose answer is not used, and
	// OpenSession waits for it. gnome-keyring 42.1 sometimes handles a new connection's first
	// call before it has its record of the caller (about one connection in two thousand on a
	// busy machine, issue 46): a first OpenSession then aborts it with SIGTRAP
	// ("gkd_secret_service_get_pkcs11_session: assertion 'client' failed", then a GLib-ERROR
	// in g_variant_new), taking every unlocked keyring and every other client with it; a
	// first ReadAlias only gets "/" for an answer. Once it is answered the keyring knows the
	// caller (no OpenSession after it met that state in 116,000 connections).
	var warm dbus.ObjectPath
	if err := conn.Object(ssName, ssPath).CallWithContext(ctx, ifService+".ReadAlias", 0, "default").Store(&warm); err != nil {
		return nil, busErr("read collection alias", err)
	}
	kp, err := newDHKeyPair(random)
	if err != nil {
		return nil, err
	}
	defer kp.destroy()
	var (
		out     dbus.Variant
		session dbus.ObjectPath
	)
	err = conn.Object(ssName, ssPath).CallWithContext(ctx, ifService+".OpenSession", 0,
		dhAlgorithm, dbus.MakeVariant(kp.publicBytes())).Store(&out, &session)
	if err != nil {
		return nil, busErr("open session", err)
	}
	c := &ssConn{conn: conn, session: session}
	defer func() {
		if err != nil {
			c.destroy()
		}
	}()
	peer, ok := out.Value().([]byte)
	if !ok {
		return nil, fmt.Errorf("open session: %w: unexpected reply type %s", ErrUnavailable, out.Signature())
	}
	if c.key, err = kp.sessionKey(peer); err != nil {
		return nil, fmt.Errorf("open session: %w: %w", ErrUnavailable, err)
	}
	// Address the owner's unique name from now on: should the service restart, calls fail
	// cleanly instead of reaching a new daemon that does not know this session.
	err = conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, ssName).Store(&c.owner)
	if err != nil {
		return nil, busErr("find secret service owner", err)
	}
	if label != "" {
		if c.coll, err = c.findLabel(ctx, label); err != nil {
			return nil, err
		}
	} else {
		err = c.service().CallWithContext(ctx, ifService+".ReadAlias", 0, alias).Store(&c.coll)
		if err != nil {
			return nil, busErr("read collection alias", err)
		}
		if c.coll == noPrompt || c.coll == "" {
			return nil, fmt.Errorf("read collection alias: %w: the secret service has no collection with alias %q", ErrUnavailable, alias)
		}
	}
	err = conn.AddMatchSignalContext(ctx, dbus.WithMatchSender(c.owner),
		dbus.WithMatchInterface(ifPrompt), dbus.WithMatchMember("Completed"))
	if err != nil {
		return nil, busErr("watch prompts", err)
	}
	return c, nil
}

// destroy closes the session and the connection and zeroes the session key. It must run only
// once no call uses c.
func (c *ssConn) destroy() {
	if c.conn.Connected() && c.session != "" && c.owner != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.obj(c.session).CallWithContext(ctx, ifSession+".Close", 0)
		cancel()
	}
	c.conn.Close()
	clear(c.key)
}

func (c *ssConn) obj(path dbus.ObjectPath) dbus.BusObject { return c.conn.Object(c.owner, path) }

func (c *ssConn) service() dbus.BusObject { return c.obj(ssPath) }

// prop reads one property into v.
func (c *ssConn) prop(ctx context.Context, path dbus.ObjectPath, iface, name string, v any) error {
	var val dbus.Variant
	if err := c.obj(path).CallWithContext(ctx, ifProps+".Get", 0, iface, name).Store(&val); err != nil {
		return busErr("read "+name, err)
	}
	if err := val.Store(v); err != nil {
		return fmt.Errorf("read %s: %w: %w", name, ErrUnavailable, err)
	}
	return nil
}

// ssError is a classified failure of a Secret Service call.
type ssError struct {
	step  string
	kind  error // ErrLocked, ErrUnavailable or ErrAliasUnknown
	err   error
	drop  bool // the connection or session is unusable: reconnect on the next call
	retry bool // the service cannot have processed the request: safe to retry at once
}

func (e *ssError) Error() string {
	msg := e.err.Error()
	var de dbus.Error
	if errors.As(e.err, &de) && de.Name != msg {
		msg = de.Name + ": " + msg
	}
	return e.step + ": " + e.kind.Error() + ": " + msg
}

func (e *ssError) Unwrap() []error { return []error{e.kind, e.err} }

// D-Bus error names the vault branches on.
const (
	errIsLocked       = "org.freedesktop.Secret.Error.IsLocked"
	errNoSession      = "org.freedesktop.Secret.Error.NoSession"
	errNoSuchObject   = "org.freedesktop.Secret.Error.NoSuchObject"
	errServiceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
	errNameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
	errDisconnected   = "org.freedesktop.DBus.Error.Disconnected"
	errNoServer       = "org.freedesktop.DBus.Error.NoServer"
	errUnknownObject  = "org.freedesktop.DBus.Error.UnknownObject"
	errUnknownMethod  = "org.freedesktop.DBus.Error.UnknownMethod"
)

// busErr classifies the error of a call made for step.
func busErr(step string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", step, err)
	}
	e := &ssError{step: step, kind: ErrUnavailable, err: err, drop: true}
	var de dbus.Error
	switch {
	case errors.Is(err, dbus.ErrClosed):
		e.retry = true
	case errors.As(err, &de):
		switch de.Name {
		case errIsLocked:
			e.kind, e.drop = ErrLocked, false
		case errServiceUnknown, errNameHasNoOwner, errDisconnected, errNoServer, errNoSession:
			e.retry = true
		case errUnknownObject, errNoSuchObject:
			e.retry = true // the collection went away: resolve the alias again
		case errUnknownMethod:
			// gnome-keyring answers UnknownMethod "Object does not exist at path" for
			// objects that are gone.
			e.retry = strings.Contains(de.Error(), "does not exist")
		}
	}
	return e
}

// itemErr classifies the error of a call on an item: an item that is gone is ErrAliasUnknown.
func itemErr(step string, err error) error {
	if objectGone(err) {
		return &ssError{step: step, kind: ErrAliasUnknown, err: err}
	}
	return busErr(step, err)
}

// objectGone reports whether err says the object called no longer exists.
func objectGone(err error) bool {
	var de dbus.Error
	return errors.As(err, &de) && (de.Name == errUnknownObject || de.Name == errNoSuchObject ||
		de.Name == errUnknownMethod && strings.Contains(de.Error(), "does not exist"))
}

// wrapStep prefixes err with the operation unless it is nil.
func wrapStep(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
