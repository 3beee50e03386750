package vault

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/keyprobe"
)

// SecretServiceSchema is the xdg:schema attribute of every item the vault writes. Items also
// carry the attributes "origin", "account" and "alias", so `secret-tool search --all xdg:schema
// dev.headless.Credential` and Seahorse show them.
const SecretServiceSchema = "dev.headless.Credential"

// D-Bus names of the Secret Service API.
const (
	ssName       = "org.freedesktop.secrets"
	ssPath       = dbus.ObjectPath("/org/freedesktop/secrets")
	ifService    = "org.freedesktop.Secret.Service"
	ifCollection = "org.freedesktop.Secret.Collection"
	ifItem       = "org.freedesktop.Secret.Item"
	ifSession    = "org.freedesktop.Secret.Session"
	ifPrompt     = "org.freedesktop.Secret.Prompt"
	ifProps      = "org.freedesktop.DBus.Properties"
	noPrompt     = dbus.ObjectPath("/")

	// secretContentType is what the vault stores; passwords are UTF-8 text without NUL.
	secretContentType = "text/plain; charset=utf8"

	// listBatch bounds the property reads in flight on the bus at once.
	listBatch = 32
)

var _ Store = (*SecretService)(nil)

// SecretServiceOptions configure OpenSecretService.
type SecretServiceOptions struct {
	// Address is the D-Bus address of the session bus (see keyprobe.SessionBusAddress). Required.
	Address string
	// Collection is the alias of the collection that holds the items; default "default".
	// Ignored when Label is set.
	Collection string
	// Label, when set, names a dedicated collection instead: the one collection whose label
	// is exactly Label (gnome-keyring supports no alias but "default"). It may not exist yet
	// ([SecretService.Create] makes it); until then List finds nothing, Secret and Remove
	// answer ErrAliasUnknown, and Add, Lock and Unlock answer ErrNoKeyring.
	Label string
	// Index is the file that lists the dedicated collection's records (metadata only);
	// required with Label. gnome-keyring cannot list a locked collection reliably, so List
	// reads this file, Add, Remove and Create keep it current, and every Unlock rebuilds it
	// from the collection.
	Index string
	// Lazy skips the connection attempt in OpenSecretService; the first call connects.
	Lazy bool
	// Rand is the source of DH keys and IVs; default crypto/rand.Reader.
	Rand io.Reader
}

// SecretService is a Store over the freedesktop Secret Service API (gnome-keyring, KWallet).
//
// It talks to the service over its own private D-Bus connection to the given address (never
// an autolaunched bus) and transfers secrets only inside a dh-ietf1024-sha256-aes128-cbc-pkcs7
// session, never a plain one. The connection is opened lazily and reopened after the bus or
// the service went away; while it is down every call answers ErrUnavailable. Writes are
// serialised. A SecretService is safe for concurrent use.
type SecretService struct {
	addr  string
	alias string
	label string
	idx   *index // with label
	rand  io.Reader

	dialing chan struct{} // one-slot semaphore: one connection attempt at a time
	writing chan struct{} // one-slot semaphore: serialises Add and Remove

	mu     sync.Mutex
	cur    *ssConn
	closed bool

	// Unlock prompts that were abandoned (their Unlock gave up waiting) and are still open
	// in the service; idle is closed while there are none.
	pending int
	idle    chan struct{}
}

// ssConn is one connection with its open session. It is immutable once published, except for
// the reference count and the dead flag, which SecretService.mu guards.
type ssConn struct {
	conn    *dbus.Conn
	owner   string // unique bus name of the service that owns the session
	session dbus.ObjectPath
	key     []byte // AES-128 session key
	coll    dbus.ObjectPath

	refs int
	dead bool
}

// OpenSecretService returns a Store on the collection with alias o.Collection of the Secret
// Service on the bus at o.Address. Unless o.Lazy is set it connects at once and returns an
// error wrapping ErrUnavailable when the bus, the service or the collection is missing.
func OpenSecretService(ctx context.Context, o SecretServiceOptions) (*SecretService, error) {
	if o.Address == "" {
		return nil, errors.New("open secret service: no bus address")
	}
	if keyprobe.IsAutolaunch(o.Address) {
		return nil, errors.New("open secret service: refusing an autolaunch bus address")
	}
	if o.Collection == "" {
		o.Collection = "default"
	}
	if o.Label != "" && o.Index == "" {
		return nil, errors.New("open secret service: a dedicated collection needs an index file")
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	idle := make(chan struct{})
	close(idle)
	s := &SecretService{
		addr:    o.Address,
		alias:   o.Collection,
		label:   o.Label,
		idle:    idle,
		rand:    o.Rand,
		dialing: make(chan struct{}, 1),
		writing: make(chan struct{}, 1),
	}
	if o.Label != "" {
		s.idx = &index{path: o.Index}
	}
	if !o.Lazy {
		c, _, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		s.release(c)
	}
	return s, nil
}

// Close closes the session and the connection. Calls after Close answer ErrUnavailable.
func (s *SecretService) Close() error {
	s.mu.Lock()
	s.closed = true
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c != nil {
		s.invalidate(c)
	}
	return nil
}

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

// lockWrites takes the write semaphore, honouring ctx.
func (s *SecretService) lockWrites(ctx context.Context) (unlock func(), err error) {
	select {
	case s.writing <- struct{}{}:
		return func() { <-s.writing }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// List implements Store. Metadata of items in a locked collection is listed too.
func (s *SecretService) List(ctx context.Context, origin string) ([]Record, error) {
	attrs := map[string]string{"xdg:schema": SecretServiceSchema}
	if origin != "" {
		if err := validOrigin(origin); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		attrs["origin"] = origin
	}
	if s.idx != nil {
		recs, err := s.idx.list(origin)
		return recs, wrapStep("list", err)
	}
	recs, err := s.search(ctx, attrs, false)
	if err != nil {
		return nil, wrapStep("list", err)
	}
	sortRecords(recs)
	if len(recs) > MaxList {
		recs = recs[:MaxList]
	}
	return recs, nil
}

// Add implements Store.
func (s *SecretService) Add(ctx context.Context, rec Record, secret []byte) error {
	if err := validRecord(rec, secret); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return fmt.Errorf("add: %w", err)
	}
	defer unlock()
	err = s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		var locked bool
		if err := c.prop(ctx, c.coll, ifCollection, "Locked", &locked); err != nil {
			return err
		}
		if locked {
			return fmt.Errorf("%w: collection is locked", ErrLocked)
		}
		if it, err := c.find(ctx, rec.Origin, rec.Alias, true); err == nil {
			return fmt.Errorf("%w: %q at %s", ErrAliasExists, it.rec.Alias, rec.Origin)
		} else if !errors.Is(err, ErrAliasUnknown) {
			return err
		}
		return c.create(ctx, rec, secret, s.rand)
	})
	if err == nil && s.idx != nil {
		rec.Created = time.Now().UTC().Truncate(time.Second)
		err = s.idx.update(func(recs []Record) []Record { return append(without(recs, rec.Origin, rec.Alias), rec) })
	}
	return wrapStep("add", err)
}

// Remove implements Store.
func (s *SecretService) Remove(ctx context.Context, origin, alias string) error {
	if err := validKey(origin, alias); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	defer unlock()
	err = s.do(ctx, func(c *ssConn) error {
		it, err := c.find(ctx, origin, alias, true)
		if err != nil {
			return err
		}
		var prompt dbus.ObjectPath
		err = c.obj(it.path).CallWithContext(ctx, ifItem+".Delete", 0).Store(&prompt)
		if err != nil {
			return itemErr("delete item", err)
		}
		if prompt != noPrompt {
			dismissed, _, err := c.prompt(ctx, prompt, nil)
			if err != nil {
				return err
			}
			if dismissed {
				return fmt.Errorf("delete item: %w: prompt dismissed", ErrLocked)
			}
		}
		return nil
	})
	if s.idx != nil && (err == nil || errors.Is(err, ErrAliasUnknown)) {
		if ierr := s.idx.update(func(recs []Record) []Record { return without(recs, origin, alias) }); err == nil {
			err = ierr
		}
	}
	return wrapStep("remove", err)
}

// Secret implements Store. A locked item answers ErrLocked; Secret never prompts.
func (s *SecretService) Secret(ctx context.Context, origin, alias string) (Record, []byte, error) {
	if err := validKey(origin, alias); err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	var (
		rec    Record
		secret []byte
	)
	err := s.do(ctx, func(c *ssConn) error {
		// Fast path, two round trips: an exact alias match, then metadata and secret at once.
		paths, err := c.search(ctx, map[string]string{"xdg:schema": SecretServiceSchema, "origin": origin, "alias": alias})
		if err != nil {
			return err
		}
		if len(paths) == 1 {
			it, pw, err := c.itemAndSecret(ctx, paths[0])
			if err != nil {
				return err
			}
			if it.rec.Origin == origin && strings.EqualFold(it.rec.Alias, alias) {
				rec, secret = it.rec, pw
				return nil
			}
			clear(pw)
		}
		// Slow path: the alias differs in case, or someone else wrote a twin item.
		it, err := c.find(ctx, origin, alias, len(paths) > 1)
		if err != nil {
			return err
		}
		if it.locked {
			return fmt.Errorf("%w: item is locked", ErrLocked)
		}
		var sec ssSecret
		err = c.obj(it.path).CallWithContext(ctx, ifItem+".GetSecret", 0, c.session).Store(&sec)
		if err != nil {
			return itemErr("get secret", err)
		}
		pw, err := c.decrypt(&sec)
		if err != nil {
			return err
		}
		rec, secret = it.rec, pw
		return nil
	})
	if err != nil {
		return Record{}, nil, wrapStep("secret", err)
	}
	return rec, secret, nil
}

// Locked reports whether the collection is locked.
func (s *SecretService) Locked(ctx context.Context) (bool, error) {
	var locked bool
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		return c.prop(ctx, c.coll, ifCollection, "Locked", &locked)
	})
	return locked, wrapStep("locked", err)
}

// Lock locks the collection. gnome-keyring locks without a prompt.
func (s *SecretService) Lock(ctx context.Context) error {
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		var (
			locked []dbus.ObjectPath
			prompt dbus.ObjectPath
		)
		err := c.service().CallWithContext(ctx, ifService+".Lock", 0, []dbus.ObjectPath{c.coll}).Store(&locked, &prompt)
		if err != nil {
			return busErr("lock collection", err)
		}
		if prompt != noPrompt {
			dismissed, _, err := c.prompt(ctx, prompt, nil)
			if err != nil {
				return err
			}
			if dismissed {
				return errors.New("lock collection: prompt dismissed")
			}
		}
		return nil
	})
	return wrapStep("lock", err)
}

// Unlock asks the Secret Service to unlock the collection, which usually shows the desktop's
// unlock prompt, and waits for the answer until ctx is done. A dismissed prompt answers
// ErrLocked. When ctx ends first, Unlock stops waiting (it never dismisses the prompt: that
// aborts gnome-keyring 42.1) and returns an error wrapping ErrLocked and ctx.Err(); if the
// abandoned prompt is answered later, the collection is locked again at once, so an unlock
// nobody waits for does not leave the collection open.
//
// prompted reports whether the service returned a prompt. One that answers at once (because the
// keyring stores an auto-unlock password, see [SecretService.AutoUnlockStored]) or no prompt at
// all (the collection was unlocked already) is not evidence of user presence.
// While an abandoned prompt is still open the service queues every later unlock behind it;
// [SecretService.Idle] tells when none is.
func (s *SecretService) Unlock(ctx context.Context) (prompted bool, err error) {
	err = s.do(ctx, func(c *ssConn) error {
		prompted = false
		if c.coll == "" {
			return ErrNoKeyring
		}
		var (
			unlocked []dbus.ObjectPath
			prompt   dbus.ObjectPath
		)
		err := c.service().CallWithContext(ctx, ifService+".Unlock", 0, []dbus.ObjectPath{c.coll}).Store(&unlocked, &prompt)
		if err != nil {
			return busErr("unlock collection", err)
		}
		if prompt == noPrompt {
			if !slices.Contains(unlocked, c.coll) {
				return fmt.Errorf("unlock collection: %w: the service did not unlock it", ErrLocked)
			}
			return nil
		}
		prompted = true
		dismissed, _, err := c.prompt(ctx, prompt, func(ch chan *dbus.Signal) {
			s.watchAbandoned(c, ch, prompt, false)
		})
		if err != nil {
			return err
		}
		if dismissed {
			return fmt.Errorf("unlock collection: %w: prompt dismissed", ErrLocked)
		}
		return nil
	})
	if err == nil && s.idx != nil {
		s.reindex(ctx) // best effort: the old index stays when this fails
	}
	return prompted, wrapStep("unlock", err)
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
func (c *ssConn) service() dbus.BusObject                 { return c.obj(ssPath) }

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

// search returns the items of the collection that match attrs.
func (c *ssConn) search(ctx context.Context, attrs map[string]string) ([]dbus.ObjectPath, error) {
	if c.coll == "" {
		return nil, nil // the dedicated collection does not exist: it holds nothing
	}
	var paths []dbus.ObjectPath
	err := c.obj(c.coll).CallWithContext(ctx, ifCollection+".SearchItems", 0, attrs).Store(&paths)
	if err != nil {
		return nil, busErr("search items", err)
	}
	return paths, nil
}

// ssItem is one item's path and metadata.
type ssItem struct {
	path   dbus.ObjectPath
	rec    Record
	locked bool
}

// items reads the metadata of paths, a bounded number of reads in flight at once. Items that
// vanish meanwhile or do not hold a valid record are skipped.
func (c *ssConn) items(ctx context.Context, paths []dbus.ObjectPath) ([]ssItem, error) {
	out := make([]ssItem, 0, len(paths))
	for start := 0; start < len(paths); start += listBatch {
		batch := paths[start:min(start+listBatch, len(paths))]
		calls := make([]*dbus.Call, len(batch))
		done := make(chan *dbus.Call, len(batch))
		for i, p := range batch {
			calls[i] = c.obj(p).GoWithContext(ctx, ifProps+".GetAll", 0, done, ifItem)
		}
		for range batch {
			<-done
		}
		for i, call := range calls {
			var props map[string]dbus.Variant
			if err := call.Store(&props); err != nil {
				e := itemErr("read item", err)
				if errors.Is(e, ErrAliasUnknown) {
					continue // deleted meanwhile
				}
				return nil, e
			}
			it, ok := itemFromProps(batch[i], props)
			if !ok {
				continue
			}
			out = append(out, it)
		}
	}
	return out, nil
}

// itemFromProps builds the record of an item from its properties.
func itemFromProps(path dbus.ObjectPath, props map[string]dbus.Variant) (ssItem, bool) {
	it := ssItem{path: path}
	var attrs map[string]string
	if v, ok := props["Attributes"]; !ok || v.Store(&attrs) != nil {
		return it, false
	}
	if v, ok := props["Locked"]; ok {
		v.Store(&it.locked)
	}
	var created uint64
	if v, ok := props["Created"]; ok && v.Store(&created) == nil && created > 0 && created < 1<<40 {
		it.rec.Created = time.Unix(int64(created), 0)
	}
	it.rec.Origin, it.rec.Account, it.rec.Alias = attrs["origin"], attrs["account"], attrs["alias"]
	ok := attrs["xdg:schema"] == SecretServiceSchema && validOrigin(it.rec.Origin) == nil &&
		credential.ValidAlias(it.rec.Alias) == nil && credential.ValidAccount(it.rec.Account) == nil
	return it, ok
}

// find returns the item of origin whose alias equals alias case-insensitively, else
// ErrAliasUnknown. With exactFirst it first searches for the alias as given, which is one
// attribute search instead of reading every item of the origin.
func (c *ssConn) find(ctx context.Context, origin, alias string, exactFirst bool) (ssItem, error) {
	searches := []map[string]string{{"xdg:schema": SecretServiceSchema, "origin": origin}}
	if exactFirst {
		searches = slices.Insert(searches, 0, map[string]string{"xdg:schema": SecretServiceSchema, "origin": origin, "alias": alias})
	}
	for _, attrs := range searches {
		paths, err := c.search(ctx, attrs)
		if err != nil {
			return ssItem{}, err
		}
		items, err := c.items(ctx, paths)
		if err != nil {
			return ssItem{}, err
		}
		var match []ssItem
		for _, it := range items {
			if it.rec.Origin == origin && strings.EqualFold(it.rec.Alias, alias) {
				match = append(match, it)
			}
		}
		if len(match) > 0 {
			// Two items can only share an alias when someone else wrote one; take the
			// oldest, then the lowest path, so the choice is stable.
			slices.SortFunc(match, func(a, b ssItem) int {
				return cmp.Or(a.rec.Created.Compare(b.rec.Created), cmp.Compare(a.path, b.path))
			})
			return match[0], nil
		}
	}
	return ssItem{}, fmt.Errorf("%w: %q at %s", ErrAliasUnknown, alias, origin)
}

// itemAndSecret reads an item's metadata and secret with both calls in flight at once.
func (c *ssConn) itemAndSecret(ctx context.Context, path dbus.ObjectPath) (ssItem, []byte, error) {
	done := make(chan *dbus.Call, 2)
	pc := c.obj(path).GoWithContext(ctx, ifProps+".GetAll", 0, done, ifItem)
	sc := c.obj(path).GoWithContext(ctx, ifItem+".GetSecret", 0, done, c.session)
	<-done
	<-done
	var sec ssSecret
	secErr := sc.Store(&sec)
	defer clear(sec.Value)
	var props map[string]dbus.Variant
	if err := pc.Store(&props); err != nil {
		return ssItem{}, nil, itemErr("read item", err)
	}
	it, ok := itemFromProps(path, props)
	if !ok {
		return ssItem{}, nil, fmt.Errorf("read item: %w: not a valid record", ErrAliasUnknown)
	}
	if it.locked {
		return ssItem{}, nil, fmt.Errorf("%w: item is locked", ErrLocked)
	}
	if secErr != nil {
		return ssItem{}, nil, itemErr("get secret", secErr)
	}
	pw, err := c.decrypt(&sec)
	if err != nil {
		return ssItem{}, nil, err
	}
	return it, pw, nil
}

// decrypt opens a secret sent in this session and zeroes its ciphertext.
func (c *ssConn) decrypt(sec *ssSecret) ([]byte, error) {
	defer clear(sec.Value)
	if sec.Session != c.session {
		return nil, errors.New("get secret: reply is for another session")
	}
	return openSecret(c.key, sec.Parameters, sec.Value)
}

// ssSecret is the Secret Service (oayays) secret struct.
type ssSecret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// create encrypts secret in the session and creates the item.
func (c *ssConn) create(ctx context.Context, rec Record, secret []byte, random io.Reader) error {
	iv, ct, err := sealSecret(c.key, secret, random)
	if err != nil {
		return err
	}
	defer clear(ct)
	props := map[string]dbus.Variant{
		ifItem + ".Label": dbus.MakeVariant(fmt.Sprintf("headless: %s (%s) at %s", rec.Alias, rec.Account, rec.Origin)),
		ifItem + ".Attributes": dbus.MakeVariant(map[string]string{
			"xdg:schema": SecretServiceSchema,
			"origin":     rec.Origin,
			"account":    rec.Account,
			"alias":      rec.Alias,
		}),
	}
	sec := ssSecret{Session: c.session, Parameters: iv, Value: ct, ContentType: secretContentType}
	var item, prompt dbus.ObjectPath
	err = c.obj(c.coll).CallWithContext(ctx, ifCollection+".CreateItem", 0, props, sec, false).Store(&item, &prompt)
	if err != nil {
		return busErr("create item", err)
	}
	if prompt != noPrompt {
		dismissed, _, err := c.prompt(ctx, prompt, nil)
		if err != nil {
			return err
		}
		if dismissed {
			return fmt.Errorf("create item: %w: prompt dismissed", ErrLocked)
		}
	}
	return nil
}

// prompt shows the prompt at path and waits for its Completed signal until ctx is done.
// It never calls Prompt.Dismiss: that aborts gnome-keyring 42.1. When ctx ends first it
// returns an error wrapping ErrLocked and ctx.Err(); abandon (if set) is called first and takes
// over the signal channel, so a Completed already on its way is not lost.
func (c *ssConn) prompt(ctx context.Context, path dbus.ObjectPath, abandon func(ch chan *dbus.Signal)) (dismissed bool, result dbus.Variant, err error) {
	ch := make(chan *dbus.Signal, 16)
	c.conn.Signal(ch)
	owned := true
	defer func() {
		if owned {
			c.conn.RemoveSignal(ch)
		}
	}()
	if err := c.obj(path).CallWithContext(ctx, ifPrompt+".Prompt", 0, "").Store(); err != nil {
		return false, result, busErr("show prompt", err)
	}
	for {
		select {
		case sig, ok := <-ch:
			if !ok {
				return false, result, &ssError{step: "wait for prompt", kind: ErrUnavailable, err: dbus.ErrClosed, drop: true}
			}
			if d, r, ok := promptCompleted(sig, c.owner, path); ok {
				return d, r, nil
			}
		case <-c.conn.Context().Done():
			return false, result, &ssError{step: "wait for prompt", kind: ErrUnavailable, err: dbus.ErrClosed, drop: true}
		case <-ctx.Done():
			if abandon != nil {
				owned = false
				abandon(ch)
			}
			return false, result, fmt.Errorf("wait for prompt: %w: prompt not answered: %w", ErrLocked, ctx.Err())
		}
	}
}

// promptCompleted decodes a Completed(dismissed, result) signal of the prompt at path.
func promptCompleted(sig *dbus.Signal, owner string, path dbus.ObjectPath) (dismissed bool, result dbus.Variant, ok bool) {
	if sig == nil || sig.Path != path || sig.Name != ifPrompt+".Completed" || sig.Sender != owner || len(sig.Body) != 2 {
		return false, result, false
	}
	dismissed, ok1 := sig.Body[0].(bool)
	result, ok2 := sig.Body[1].(dbus.Variant)
	return dismissed, result, ok1 && ok2
}

// watchAbandoned keeps watching a prompt nobody waits for any more (the service keeps it open:
// it is never dismissed) on the signal channel ch, which it now owns. It holds a reference on
// c, so the connection (the only one the Completed signal is sent to) stays open although
// calls no longer use it, and counts the prompt as pending (see Idle). When the prompt
// completes, answered or not, it locks the collection (with lockResult, the collection the
// prompt created); it also ends when the service's owner leaves the bus (its prompts went with
// it) or the connection ends.
func (s *SecretService) watchAbandoned(c *ssConn, ch chan *dbus.Signal, path dbus.ObjectPath, lockResult bool) {
	s.mu.Lock()
	c.refs++
	s.mu.Unlock()
	s.promptPending(+1)
	go func() {
		defer s.release(c)
		defer s.promptPending(-1)
		defer c.conn.RemoveSignal(ch)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case sig, ok := <-ch:
				if !ok {
					return
				}
				_, result, ok := promptCompleted(sig, c.owner, path)
				if !ok {
					continue
				}
				target := c.coll
				if p, ok := result.Value().(dbus.ObjectPath); lockResult && ok && p != noPrompt {
					target = p
				}
				if target != "" {
					ctx, cancel := context.WithTimeout(c.conn.Context(), 5*time.Second)
					c.service().CallWithContext(ctx, ifService+".Lock", 0, []dbus.ObjectPath{target})
					cancel()
				}
				return
			case <-c.conn.Context().Done():
				return
			case <-tick.C:
				var has bool
				ctx, cancel := context.WithTimeout(c.conn.Context(), 5*time.Second)
				err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, c.owner).Store(&has)
				cancel()
				if err == nil && !has {
					return
				}
			}
		}
	}()
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

// promptPending counts abandoned unlock prompts that are still open.
func (s *SecretService) promptPending(delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending += delta
	switch {
	case delta > 0 && s.pending == 1:
		s.idle = make(chan struct{})
	case delta < 0 && s.pending == 0:
		close(s.idle)
	}
}

// Idle returns a channel that is closed while no abandoned unlock prompt is open. A prompt
// abandoned by Unlock stays open in the service (it is never dismissed) until the person
// answers it, the prompter goes away or the connection ends; then the collection is locked
// again if it was unlocked, and the channel closes.
func (s *SecretService) Idle() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle
}

// findLabel returns the one collection labelled label, "" when there is none, or an error
// when several are (one could be a decoy made by another program).
func (c *ssConn) findLabel(ctx context.Context, label string) (dbus.ObjectPath, error) {
	var colls []dbus.ObjectPath
	if err := c.prop(ctx, ssPath, ifService, "Collections", &colls); err != nil {
		return "", err
	}
	var found []dbus.ObjectPath
	for _, p := range colls {
		var l string
		if err := c.prop(ctx, p, ifCollection, "Label", &l); err != nil {
			if objectGone(err) {
				continue // deleted meanwhile
			}
			return "", err
		}
		if l == label {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("find collection: %w: %d collections are labelled %q; remove the ones headless did not create", ErrUnavailable, len(found), label)
}

// Create makes the dedicated collection (see SecretServiceOptions.Label) when it does not
// exist. The service asks the person for the new collection's password with its own prompt;
// that password never passes through this process. The new collection is unlocked; callers
// lock it. created is false when it already existed. A dismissed prompt is ErrLocked; when
// ctx ends first the prompt is abandoned (never dismissed).
func (s *SecretService) Create(ctx context.Context) (created bool, err error) {
	if s.label == "" {
		return false, errors.New("create collection: the store was not opened on a dedicated collection")
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return false, fmt.Errorf("create collection: %w", err)
	}
	defer unlock()
	err = s.do(ctx, func(c *ssConn) error {
		coll, err := c.findLabel(ctx, s.label)
		if err != nil {
			return err
		}
		if coll != "" {
			if coll != c.coll {
				s.invalidate(c) // made elsewhere, or by a late answer: resolve it again
			}
			return nil
		}
		var prompt dbus.ObjectPath
		props := map[string]dbus.Variant{ifCollection + ".Label": dbus.MakeVariant(s.label)}
		if err := c.service().CallWithContext(ctx, ifService+".CreateCollection", 0, props, "").Store(&coll, &prompt); err != nil {
			return busErr("create collection", err)
		}
		if prompt != noPrompt {
			dismissed, _, err := c.prompt(ctx, prompt, func(ch chan *dbus.Signal) {
				s.watchAbandoned(c, ch, prompt, true)
			})
			if err != nil {
				return err
			}
			if dismissed {
				return fmt.Errorf("create collection: %w: prompt dismissed", ErrLocked)
			}
		}
		created = true
		s.invalidate(c) // the next call resolves the label again
		return s.idx.update(func([]Record) []Record { return nil })
	})
	return created, wrapStep("create", err)
}

// AutoUnlockStored reports whether gnome-keyring keeps the collection's password in the login
// keyring for automatic unlock (the unlock dialog's "Automatically unlock this keyring whenever
// I'm logged in" box was left ticked). Then every Unlock succeeds without asking anyone. A
// missing dedicated collection answers false.
func (s *SecretService) AutoUnlockStored(ctx context.Context) (bool, error) {
	var stored bool
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			stored = false
			return nil
		}
		// gnome-keyring 42 files the stored password under the keyring's location; the
		// item itself is hidden from the Secret Service API, but a search finds it.
		id := string(c.coll)[strings.LastIndexByte(string(c.coll), '/')+1:]
		var unlocked, locked []dbus.ObjectPath
		err := c.service().CallWithContext(ctx, ifService+".SearchItems", 0,
			map[string]string{"keyring": "LOCAL:/keyrings/" + id + ".keyring"}).Store(&unlocked, &locked)
		if err != nil {
			return busErr("search auto-unlock password", err)
		}
		stored = len(unlocked)+len(locked) > 0
		return nil
	})
	return stored, wrapStep("auto-unlock check", err)
}

// SystemPrompterName is the bus name gnome-keyring shows its prompts through (gcr-prompter).
const SystemPrompterName = "org.gnome.keyring.SystemPrompter"

// SystemPrompter reports whether the keyring's prompter is running on the bus (owned) or, when
// it is not, can be started by the bus (activatable).
func (s *SecretService) SystemPrompter(ctx context.Context) (owned, activatable bool, err error) {
	err = s.do(ctx, func(c *ssConn) error {
		bus := c.conn.BusObject()
		if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, SystemPrompterName).Store(&owned); err != nil {
			return busErr("look for the system prompter", err)
		}
		if owned {
			return nil // activatable is not looked up (one round trip less per release)
		}
		var names []string
		if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
			return busErr("look for the system prompter", err)
		}
		activatable = slices.Contains(names, SystemPrompterName)
		return nil
	})
	return owned, activatable, wrapStep("system prompter", err)
}

// reindex rebuilds the index from the (unlocked) collection.
func (s *SecretService) reindex(ctx context.Context) error {
	recs, err := s.search(ctx, map[string]string{"xdg:schema": SecretServiceSchema}, true)
	if err != nil {
		return err
	}
	return s.idx.update(func([]Record) []Record { return recs })
}

// search returns the records of the items that match attrs; with unlocked, a locked item
// (whose attributes the service may not know) fails the search.
func (s *SecretService) search(ctx context.Context, attrs map[string]string, unlocked bool) ([]Record, error) {
	var recs []Record
	err := s.do(ctx, func(c *ssConn) error {
		paths, err := c.search(ctx, attrs)
		if err != nil {
			return err
		}
		items, err := c.items(ctx, paths)
		if err != nil {
			return err
		}
		recs = recs[:0]
		for _, it := range items {
			if unlocked && it.locked {
				return fmt.Errorf("search: %w: item is locked", ErrLocked)
			}
			recs = append(recs, it.rec)
		}
		return nil
	})
	return recs, err
}
