package vault

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/headless-dev/headless/internal/credential"
)

// Items: the Store methods and the item searches, reads and writes behind them. Secrets cross
// the bus only inside the session (sealSecret, openSecret) and are zeroed after use.

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
	// Concurrent Lists of one origin share a search that began after each of them asked
	// (rounds): gnome-keyring answers one message at a time, and a search per request queued
	// every client behind every other's.
	recs, err := s.lists.do(ctx, origin, func(ctx context.Context) ([]Record, error) {
		recs, err := s.search(ctx, attrs, false)
		if err != nil {
			return nil, err
		}
		sortRecords(recs)
		if len(recs) > MaxList {
			recs = recs[:MaxList]
		}
		return recs, nil
	})
	if err != nil {
		return nil, wrapStep("list", err)
	}
	return slices.Clone(recs), nil // the round's slice is shared by its callers
}

// Add implements Store.
func (s *SecretService) Add(ctx context.Context, rec Record, secret []byte) error {
	if err := validRecord(&rec, secret); err != nil {
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
		rec.Created = s.now().UTC().Truncate(time.Second)
		err = s.idx.update(func(recs []Record) []Record { return append(without(recs, rec.Origin, rec.Alias), rec) })
		if err != nil {
			// The index could not take the entry (a full disk): take the item out again, so
			// a failed add leaves no record that list cannot show and that blocks its alias.
			if derr := s.do(ctx, func(c *ssConn) error { return c.remove(ctx, rec.Origin, rec.Alias) }); derr != nil {
				err = fmt.Errorf("%w (removing the new keyring item again failed too: %v; the next unlock lists it)", err, derr)
			}
		}
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
	// The index goes first: an index that cannot be written (a full disk) refuses the remove
	// with nothing removed, rather than a removed item answering an error and still listed.
	var entry []Record
	if s.idx != nil {
		err := s.idx.update(func(recs []Record) []Record {
			for _, r := range recs {
				if r.Origin == origin && strings.EqualFold(r.Alias, alias) {
					entry = append(entry, r)
				}
			}
			return without(recs, origin, alias)
		})
		if err != nil {
			return wrapStep("remove", fmt.Errorf("%w; nothing was removed", err))
		}
	}
	err = s.do(ctx, func(c *ssConn) error { return c.remove(ctx, origin, alias) })
	if err != nil && !errors.Is(err, ErrAliasUnknown) && len(entry) > 0 {
		// The item stays: so does its entry (if this fails too, the next unlock lists it).
		if ierr := s.idx.update(func(recs []Record) []Record { return append(without(recs, origin, alias), entry...) }); ierr != nil {
			err = fmt.Errorf("%w (putting its index entry back failed too: %v; the next unlock lists it)", err, ierr)
		}
	}
	return wrapStep("remove", err)
}

// remove deletes the item origin/alias.
func (c *ssConn) remove(ctx context.Context, origin, alias string) error {
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
}

// Replace implements Store: the item's secret is set (Item.SetSecret) inside the encrypted
// session, its attributes kept. A locked item answers ErrLocked; Replace never prompts.
func (s *SecretService) Replace(ctx context.Context, origin, alias string, secret []byte) error {
	if err := validKey(origin, alias); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	defer unlock()
	err = s.do(ctx, func(c *ssConn) error {
		it, err := c.find(ctx, origin, alias, true)
		if err != nil {
			return err
		}
		if it.locked {
			return fmt.Errorf("%w: item is locked", ErrLocked)
		}
		if err := validReplace(it.rec, secret); err != nil {
			return err
		}
		iv, ct, err := sealSecret(c.key, secret, s.rand)
		if err != nil {
			return err
		}
		defer clear(ct)
		sec := ssSecret{Session: c.session, Parameters: iv, Value: ct, ContentType: secretContentType}
		if err := c.obj(it.path).CallWithContext(ctx, ifItem+".SetSecret", 0, sec).Err; err != nil {
			return itemErr("set secret", err)
		}
		return nil
	})
	return wrapStep("replace", err)
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

// factorAttr is the item attribute that says a second factor is stored with the password.
const factorAttr = "second_factor"

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
	it.rec.TOTP = attrs[factorAttr] == "totp"
	it.rec.Passkey = attrs[factorAttr] == "passkey"
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
	attrs := map[string]string{
		"xdg:schema": SecretServiceSchema,
		"origin":     rec.Origin,
		"account":    rec.Account,
		"alias":      rec.Alias,
	}
	if rec.TOTP {
		// Only that a second factor exists: the seed is in the item's secret, with the password.
		attrs[factorAttr] = "totp"
	}
	if rec.Passkey {
		// Only that the item is a passkey: its key is the item's secret.
		attrs[factorAttr] = "passkey"
	}
	props := map[string]dbus.Variant{
		ifItem + ".Label":      dbus.MakeVariant(fmt.Sprintf("headless: %s (%s) at %s", rec.Alias, rec.Account, rec.Origin)),
		ifItem + ".Attributes": dbus.MakeVariant(attrs),
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
