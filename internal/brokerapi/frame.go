package brokerapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/headless-dev/headless/internal/wire"
)

// SecretRequestFrame builds a request frame {"id","method","params":{META…,"secret":"B64"}} by
// hand, so that no JSON encoder buffer holds the secret. meta must marshal to a JSON object with
// no "secret" field. The caller zeroes the returned frame after writing it.
func SecretRequestFrame(id uint64, method string, meta any, secret []byte) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	if len(m) < 3 || m[0] != '{' || m[len(m)-1] != '}' {
		return nil, fmt.Errorf("secret frame: params are not a non-empty object")
	}
	return secretFrame(fmt.Appendf(nil, `{"id":%d,"method":%q,"params":`, id, method), m, secret, "}}\n")
}

// ReleaseFrame builds a release reply by hand so that no encoder buffer holds the secret.
// The caller zeroes the returned frame after writing it.
func ReleaseFrame(id uint64, meta Released, secret []byte) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return secretFrame(fmt.Appendf(nil, `{"id":%d,"result":`, id), m, secret, "}}\n")
}

// secretFrame is head + meta-without-closing-brace + ,"secret":"B64" + tail.
func secretFrame(head, meta, secret []byte, tail string) ([]byte, error) {
	n := len(head) + len(meta) + 12 + base64.StdEncoding.EncodedLen(len(secret)) + len(tail)
	if n > wire.MaxFrame {
		return nil, wire.ErrFrameTooLarge
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, meta[:len(meta)-1]...)
	b = append(b, `,"secret":"`...)
	b = base64.StdEncoding.AppendEncode(b, secret)
	b = append(b, '"')
	b = append(b, tail...)
	return b, nil
}
