package vault

import (
	"context"
	"fmt"
)

// Unavailable is the Store used when no vault can be reached at all (for example no D-Bus
// session bus address). Every call fails with ErrUnavailable and the reason; it stores nothing.
type Unavailable struct{ Reason string }

var _ Store = Unavailable{}

func (u Unavailable) err() error { return fmt.Errorf("%w: %s", ErrUnavailable, u.Reason) }

func (u Unavailable) List(context.Context, string) ([]Record, error) { return nil, u.err() }
func (u Unavailable) Add(context.Context, Record, []byte) error      { return u.err() }
func (u Unavailable) Remove(context.Context, string, string) error   { return u.err() }
func (u Unavailable) Replace(context.Context, string, string, []byte) error {
	return u.err()
}
func (u Unavailable) Secret(context.Context, string, string) (Record, []byte, error) {
	return Record{}, nil, u.err()
}
