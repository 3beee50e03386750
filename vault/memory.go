package vault

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/credential"
)

var _ Store = (*Memory)(nil)

// MemoryOptions configure NewMemory.
type MemoryOptions struct {
	// MaxRecords bounds the number of records; Add beyond it answers ErrFull. Default 64.
	MaxRecords int
	// Now stamps Record.Created; default time.Now.
	Now func() time.Time
}

// Memory is a bounded in-process Store for isolated browser sessions. It is never a fallback
// for a locked or missing vault. Origins match exactly; aliases case-insensitively. It keeps
// its own copies of secrets and zeroes them on Remove and Wipe. Memory is safe for
// concurrent use.
type Memory struct {
	max int
	now func() time.Time

	mu   sync.Mutex
	recs map[memKey]*memEntry
}

type memKey struct {
	origin string
	alias  string // lower-cased
}

type memEntry struct {
	rec    Record
	secret []byte
}

// NewMemory returns an empty Memory store.
func NewMemory(o MemoryOptions) *Memory {
	if o.MaxRecords <= 0 {
		o.MaxRecords = 64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Memory{max: o.MaxRecords, now: o.Now, recs: make(map[memKey]*memEntry)}
}

func memKeyOf(origin, alias string) memKey {
	return memKey{origin: origin, alias: strings.ToLower(alias)}
}

// List implements Store.
func (m *Memory) List(ctx context.Context, origin string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	if origin != "" {
		if err := validOrigin(origin); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
	}
	m.mu.Lock()
	recs := make([]Record, 0, len(m.recs))
	for k, e := range m.recs {
		if origin == "" || k.origin == origin {
			recs = append(recs, e.rec)
		}
	}
	m.mu.Unlock()
	sortRecords(recs)
	if len(recs) > MaxList {
		recs = recs[:MaxList]
	}
	return recs, nil
}

// Add implements Store. It stores a copy of secret.
func (m *Memory) Add(ctx context.Context, rec Record, secret []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if err := validRecord(&rec, secret); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	k := memKeyOf(rec.Origin, rec.Alias)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.recs[k]; ok {
		return fmt.Errorf("add: %w: %q at %s", ErrAliasExists, rec.Alias, rec.Origin)
	}
	if len(m.recs) >= m.max {
		return fmt.Errorf("add: %w: %d records", ErrFull, m.max)
	}
	rec.Created = m.now()
	m.recs[k] = &memEntry{rec: rec, secret: append([]byte(nil), secret...)}
	return nil
}

// Remove implements Store. The removed secret is zeroed.
func (m *Memory) Remove(ctx context.Context, origin, alias string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if err := validKey(origin, alias); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	k := memKeyOf(origin, alias)
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.recs[k]
	if !ok {
		return fmt.Errorf("remove: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	credential.Zero(e.secret)
	delete(m.recs, k)
	return nil
}

// Replace implements Store. The old secret is zeroed.
func (m *Memory) Replace(ctx context.Context, origin, alias string, secret []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.recs[memKeyOf(origin, alias)]
	if !ok {
		return fmt.Errorf("replace: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	if err := validReplace(e.rec, secret); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	credential.Zero(e.secret)
	e.secret = append([]byte(nil), secret...)
	return nil
}

// Secret implements Store. The returned slice is a fresh copy.
func (m *Memory) Secret(ctx context.Context, origin, alias string) (Record, []byte, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	if err := validKey(origin, alias); err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.recs[memKeyOf(origin, alias)]
	if !ok {
		return Record{}, nil, fmt.Errorf("secret: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	return e.rec, append([]byte(nil), e.secret...), nil
}

// Wipe zeroes every secret and removes every record.
func (m *Memory) Wipe() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.recs {
		credential.Zero(e.secret)
		delete(m.recs, k)
	}
}
