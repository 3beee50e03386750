package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/credential"
)

// kvStore is the Store logic over a plain (service, user) → value secret store such as the
// macOS keychain, which cannot enumerate or tag items. Each credential is one item (service
// kvServicePrefix+origin, user = alias); one index, split over items (service kvIndexService,
// users "index.0", "index.1", …), holds the JSON list of records so List works. The index is
// not secret. It is portable so that its logic is tested on every platform; only the darwin
// Keychain uses it in production.
//
// The backend has no transactions: Add writes the secret before the index and Remove the
// index before the secret, so an interruption leaves at worst an invisible orphan secret,
// never a listed record without one.
type kvStore struct {
	kv  kvBackend
	now func() time.Time

	mu sync.Mutex
}

// kvBackend is a (service, user) → value store.
type kvBackend interface {
	Set(service, user, value string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// errKVNotFound is what a kvBackend answers for a missing item.
var errKVNotFound = errors.New("item not found")

// errKVTooBig is what a kvBackend answers for a value it cannot store.
var errKVTooBig = errors.New("item too large")

const (
	kvServicePrefix = "headless "
	kvIndexService  = "headless"
	kvIndexUser     = "index."
	kvChunk         = 1500 // bytes of index JSON per item (go-keyring caps a whole Set at ~3000)
	kvMaxChunks     = 1000
)

// kvIndex is the stored index.
type kvIndex struct {
	Version int      `json:"v"`
	Records []Record `json:"records"`
}

func newKVStore(kv kvBackend, now func() time.Time) *kvStore {
	if now == nil {
		now = time.Now
	}
	return &kvStore{kv: kv, now: now}
}

// kvErr classifies a backend error for step.
func kvErr(step string, err error) error {
	switch {
	case errors.Is(err, errKVNotFound):
		return fmt.Errorf("%s: %w", step, ErrAliasUnknown)
	case errors.Is(err, errKVTooBig):
		return fmt.Errorf("%s: %w: record too large for the keychain", step, credential.ErrInvalid)
	}
	return fmt.Errorf("%s: %w: %w", step, ErrUnavailable, err)
}

// load reads the index; a missing index is empty.
func (s *kvStore) load() ([]Record, error) {
	var buf bytes.Buffer
	for i := 0; ; i++ {
		if i == kvMaxChunks {
			return nil, fmt.Errorf("read index: %w: too many index items", ErrUnavailable)
		}
		v, err := s.kv.Get(kvIndexService, kvIndexUser+strconv.Itoa(i))
		if errors.Is(err, errKVNotFound) {
			break
		}
		if err != nil {
			return nil, kvErr("read index", err)
		}
		buf.WriteString(v)
	}
	if buf.Len() == 0 {
		return nil, nil
	}
	// Decode only the first JSON value: a shorter index written over a longer one may leave
	// stale trailing items if an interruption kept them from being deleted.
	var idx kvIndex
	if err := json.NewDecoder(&buf).Decode(&idx); err != nil {
		return nil, fmt.Errorf("read index: %w: index is corrupt: %w", ErrUnavailable, err)
	}
	if idx.Version != 1 {
		return nil, fmt.Errorf("read index: %w: unknown index version %d", ErrUnavailable, idx.Version)
	}
	return idx.Records, nil
}

// save writes the index and deletes index items it no longer needs.
func (s *kvStore) save(recs []Record) error {
	b, err := json.Marshal(kvIndex{Version: 1, Records: recs})
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	n := 0
	for off := 0; off < len(b); off += kvChunk {
		if err := s.kv.Set(kvIndexService, kvIndexUser+strconv.Itoa(n), string(b[off:min(off+kvChunk, len(b))])); err != nil {
			return kvErr("write index", err)
		}
		n++
	}
	for i := n; i < kvMaxChunks; i++ {
		err := s.kv.Delete(kvIndexService, kvIndexUser+strconv.Itoa(i))
		if errors.Is(err, errKVNotFound) {
			break
		}
		if err != nil {
			return kvErr("write index", err)
		}
	}
	return nil
}

// lookup returns the index of the record of origin whose alias matches case-insensitively.
func lookup(recs []Record, origin, alias string) int {
	for i, r := range recs {
		if r.Origin == origin && strings.EqualFold(r.Alias, alias) {
			return i
		}
	}
	return -1
}

func (s *kvStore) List(ctx context.Context, origin string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	if origin != "" {
		if err := validOrigin(origin); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
	}
	s.mu.Lock()
	recs, err := s.load()
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	out := recs[:0]
	for _, r := range recs {
		if origin == "" || r.Origin == origin {
			out = append(out, r)
		}
	}
	sortRecords(out)
	if len(out) > MaxList {
		out = out[:MaxList]
	}
	return out, nil
}

func (s *kvStore) Add(ctx context.Context, rec Record, secret []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if err := validRecord(&rec, secret); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.load()
	if err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if lookup(recs, rec.Origin, rec.Alias) >= 0 {
		return fmt.Errorf("add: %w: %q at %s", ErrAliasExists, rec.Alias, rec.Origin)
	}
	if len(recs) >= MaxList {
		return fmt.Errorf("add: %w: %d records", ErrFull, MaxList)
	}
	// go-keyring takes a string; this copy cannot be zeroed.
	if err := s.kv.Set(kvServicePrefix+rec.Origin, rec.Alias, string(secret)); err != nil {
		return kvErr("add: write secret", err)
	}
	rec.Created = s.now().UTC().Truncate(time.Second)
	if err := s.save(append(recs, rec)); err != nil {
		s.kv.Delete(kvServicePrefix+rec.Origin, rec.Alias)
		return fmt.Errorf("add: %w", err)
	}
	return nil
}

func (s *kvStore) Remove(ctx context.Context, origin, alias string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if err := validKey(origin, alias); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.load()
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	i := lookup(recs, origin, alias)
	if i < 0 {
		return fmt.Errorf("remove: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	stored := recs[i].Alias
	if err := s.save(append(recs[:i:i], recs[i+1:]...)); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if err := s.kv.Delete(kvServicePrefix+origin, stored); err != nil && !errors.Is(err, errKVNotFound) {
		return kvErr("remove: delete secret", err)
	}
	return nil
}

func (s *kvStore) Replace(ctx context.Context, origin, alias string, secret []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	if err := validKey(origin, alias); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.load()
	if err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	i := lookup(recs, origin, alias)
	if i < 0 {
		return fmt.Errorf("replace: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	if err := validReplace(recs[i], secret); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	// go-keyring takes a string; this copy cannot be zeroed. Set overwrites in one step.
	if err := s.kv.Set(kvServicePrefix+origin, recs[i].Alias, string(secret)); err != nil {
		return kvErr("replace: write secret", err)
	}
	return nil
}

func (s *kvStore) Secret(ctx context.Context, origin, alias string) (Record, []byte, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	if err := validKey(origin, alias); err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.load()
	if err != nil {
		return Record{}, nil, fmt.Errorf("secret: %w", err)
	}
	i := lookup(recs, origin, alias)
	if i < 0 {
		return Record{}, nil, fmt.Errorf("secret: %w: %q at %s", ErrAliasUnknown, alias, origin)
	}
	v, err := s.kv.Get(kvServicePrefix+origin, recs[i].Alias)
	if err != nil {
		return Record{}, nil, kvErr("secret: read secret", err)
	}
	// The string from go-keyring cannot be zeroed; the returned copy can.
	return recs[i], []byte(v), nil
}
