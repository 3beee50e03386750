// Package challenge issues and checks single-use release challenges.
//
// # Security contract
//
// A challenge binds one future password release to a browser session, a document (the CDP
// frame/loader identity of the page that holds the login form), an exact canonical origin and an
// expiry. IDs come from crypto/rand.Text (26 base32 characters, 130 bits). A challenge is
// consumed by its first use attempt, successful or not, so an ID can never be replayed.
// The registry is bounded; the clock is injected.
//
// # Checks
//
// [Registry.Consume] answers, in this order: [ErrUnknown] (never issued, or already pruned or
// evicted), [ErrUsed] (a use was attempted before), [ErrExpired] (now ≥ Expires),
// [ErrMismatch] (the session or document differs). Every answer except ErrUnknown burns the
// challenge: a caller that guesses the wrong session or document, or arrives too late, cannot
// try again. The origin is not a Consume argument: the caller compares the returned
// Challenge.Origin with the alias's origin and the document's current origin itself.
//
// [Registry.Issue] accepts only a canonical origin (see internal/origin) and a non-empty
// session and document of at most [MaxField] bytes without control characters.
//
// # Bounds
//
// The registry holds at most Options.Max entries, live or used. A used entry stays as a
// tombstone until its expiry so that a replay gets ErrUsed, not ErrUnknown. Issue first prunes
// every expired entry; if the registry is still full it evicts the oldest entry, whatever its
// state. This favours the newest challenge on purpose: a flood of Issue calls can make an old,
// unused challenge fail with ErrUnknown (fail closed: the user is asked to log in again), but it
// can never make a new, legitimate login fail.
//
// # Not guaranteed
//
// The registry lives in memory: a restart forgets every challenge (they all become
// ErrUnknown). Looking an ID up in a Go map is not constant-time; the map's hash is seeded per
// process and an ID carries 130 random bits, so timing reveals nothing useful. The stored ID,
// session and document are compared with crypto/subtle after the lookup.
package challenge

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// Defaults for [Options].
const (
	DefaultTTL = 120 * time.Second
	DefaultMax = 1024
)

// MaxField is the longest session, document or origin that Issue accepts, in bytes.
const MaxField = 256

// IDLen is the length of a challenge ID.
const IDLen = 26

// Errors. Consume returns exactly one of the first four, unwrapped; Issue wraps ErrInvalid.
var (
	ErrUnknown  = wire.Sentinel(wire.CodeChallengeUnk, "challenge: unknown")
	ErrUsed     = wire.Sentinel(wire.CodeChallengeUsed, "challenge: already used")
	ErrExpired  = wire.Sentinel(wire.CodeChallengeExp, "challenge: expired")
	ErrMismatch = wire.Sentinel(wire.CodeChallengeMism, "challenge: session or document mismatch")
	ErrInvalid  = wire.Sentinel(wire.CodeInvalidArgument, "challenge: invalid argument")
)

// Challenge is one issued challenge. It holds no secret beyond the ID itself.
type Challenge struct {
	ID       string
	Session  string
	Document string
	Origin   string // canonical, see internal/origin
	Expires  time.Time
	// Meta is opaque, non-secret data the issuer attached (brokerd: the credential metadata
	// seen at issue time). Consume returns it once; the registry then drops it.
	Meta any
}

// Options configures a [Registry]. Zero or negative values take the defaults.
type Options struct {
	TTL time.Duration    // lifetime of a challenge; default DefaultTTL
	Max int              // entries held, live and used; default DefaultMax
	Now func() time.Time // clock; default time.Now
}

type entry struct {
	c    Challenge
	used bool
}

// Registry issues and consumes challenges. It is safe for concurrent use.
type Registry struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	queue   []*entry // the entries of the map in issue order, oldest first
}

// New returns an empty registry.
func New(o Options) *Registry {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Registry{
		ttl:     o.TTL,
		max:     o.Max,
		now:     o.Now,
		entries: make(map[string]*entry),
	}
}

// Issue records a new challenge bound to session, document and origin, and returns it.
// It fails with an error wrapping [ErrInvalid] when an argument is empty, longer than
// [MaxField], contains control characters or invalid UTF-8, or when origin is not canonical.
func (r *Registry) Issue(session, document, origin string) (Challenge, error) {
	return r.IssueWith(session, document, origin, nil)
}

// IssueWith is Issue with issuer data attached (see [Challenge.Meta]).
func (r *Registry) IssueWith(session, document, origin string, meta any) (Challenge, error) {
	if err := checkField("session", session); err != nil {
		return Challenge{}, err
	}
	if err := checkField("document", document); err != nil {
		return Challenge{}, err
	}
	if err := checkOrigin(origin); err != nil {
		return Challenge{}, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.pruneLocked(now)
	for len(r.entries) >= r.max {
		r.popLocked()
	}
	id := rand.Text()
	for r.entries[id] != nil { // 2^-130; never loops in practice
		id = rand.Text()
	}
	e := &entry{c: Challenge{
		ID:       id,
		Session:  session,
		Document: document,
		Origin:   origin,
		Expires:  now.Add(r.ttl),
		Meta:     meta,
	}}
	r.entries[id] = e
	r.queue = append(r.queue, e)
	return e.c, nil
}

// Consume checks the challenge id against session and document and burns it. It returns the
// challenge only when every check passes; see the package documentation for the order of the
// checks and which errors burn the challenge.
func (r *Registry) Consume(id, session, document string) (Challenge, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[id]
	if e == nil || subtle.ConstantTimeCompare([]byte(e.c.ID), []byte(id)) != 1 {
		return Challenge{}, ErrUnknown
	}
	if e.used {
		return Challenge{}, ErrUsed
	}
	e.used = true
	c := e.c
	e.c.Meta = nil // a tombstone keeps only what replay detection needs
	if !r.now().Before(e.c.Expires) {
		return Challenge{}, ErrExpired
	}
	s := subtle.ConstantTimeCompare([]byte(e.c.Session), []byte(session))
	d := subtle.ConstantTimeCompare([]byte(e.c.Document), []byte(document))
	if s&d != 1 {
		return Challenge{}, ErrMismatch
	}
	return c, nil
}

// Len returns the number of entries held: live challenges, used tombstones, and expired
// entries that the next Issue will prune.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

// pruneLocked drops expired entries from the front of the queue. With a clock that never goes
// back the queue is in expiry order, so this drops every expired entry; if the clock does go
// back, later entries are dropped once they reach the front.
func (r *Registry) pruneLocked(now time.Time) {
	for len(r.queue) > 0 && !now.Before(r.queue[0].c.Expires) {
		r.popLocked()
	}
}

// popLocked drops the oldest entry.
func (r *Registry) popLocked() {
	e := r.queue[0]
	r.queue[0] = nil
	r.queue = r.queue[1:]
	delete(r.entries, e.c.ID)
	if len(r.queue) == 0 {
		r.queue = r.queue[:0:0] // let the backing array go
	}
}

func checkField(name, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalid, name)
	case len(v) > MaxField:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalid, name, MaxField)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, name)
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) {
			return fmt.Errorf("%w: %s contains a control character", ErrInvalid, name)
		}
	}
	return nil
}

func checkOrigin(o string) error {
	if err := checkField("origin", o); err != nil {
		return err
	}
	c, err := origin.Canonical(o)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if c != o {
		return fmt.Errorf("%w: origin is not canonical (want %q)", ErrInvalid, c)
	}
	return nil
}
