package vault

import "time"

// MemorySecretsForTest returns the slices Memory holds (not copies), so a test can check that
// Wipe and Remove zero them.
func MemorySecretsForTest(m *Memory) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]byte
	for _, e := range m.recs {
		out = append(out, e.secret)
	}
	return out
}

// KVStoreForTest is the keychain Store logic over an in-memory backend.
type KVStoreForTest = kvStore

// MapKV is an in-memory kvBackend that, like go-keyring on macOS, rejects oversized Sets.
type MapKV struct {
	m    map[[2]string]string
	Fail error // when set, every call fails with it
}

// NewKVStoreForTest returns the keychain Store logic over kv.
func NewKVStoreForTest(kv *MapKV, now func() time.Time) *KVStoreForTest {
	if kv.m == nil {
		kv.m = make(map[[2]string]string)
	}
	return newKVStore(kv, now)
}

// Items returns the number of stored items.
func (kv *MapKV) Items() map[[2]string]string { return kv.m }

func (kv *MapKV) Set(service, user, value string) error {
	if kv.Fail != nil {
		return kv.Fail
	}
	if len(service)+len(user)+len(value)*4/3 > 3000 {
		return errKVTooBig
	}
	kv.m[[2]string{service, user}] = value
	return nil
}

func (kv *MapKV) Get(service, user string) (string, error) {
	if kv.Fail != nil {
		return "", kv.Fail
	}
	v, ok := kv.m[[2]string{service, user}]
	if !ok {
		return "", errKVNotFound
	}
	return v, nil
}

func (kv *MapKV) Delete(service, user string) error {
	if kv.Fail != nil {
		return kv.Fail
	}
	if _, ok := kv.m[[2]string{service, user}]; !ok {
		return errKVNotFound
	}
	delete(kv.m, [2]string{service, user})
	return nil
}
