package vault

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
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
	// Now stamps the creation time the index records for a new credential; default time.Now.
	Now func() time.Time
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
	now   func() time.Time

	dialing chan struct{}    // one-slot semaphore: one connection attempt at a time
	writing chan struct{}    // one-slot semaphore: serialises Add and Remove
	lists   rounds[[]Record] // concurrent Lists of one origin share a search (rounds.go)

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
	if o.Now == nil {
		o.Now = time.Now
	}
	idle := make(chan struct{})
	close(idle)
	s := &SecretService{
		addr:    o.Address,
		alias:   o.Collection,
		label:   o.Label,
		idle:    idle,
		rand:    o.Rand,
		now:     o.Now,
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
