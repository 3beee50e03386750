package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"unicode/utf8"
)

// InsertSecret types secret into the focused element of a session with Input.insertText.
// The message is built by hand into a buffer that is zeroed after writing: json.Marshal would
// leave a copy in its pooled buffers. This is the only way a password reaches the browser.
func (b *Browser) InsertSecret(ctx context.Context, sessionID string, secret []byte) error {
	id := b.next.Add(1)
	head, err := json.Marshal(message{ID: id, Method: "Input.insertText", SessionID: sessionID})
	if err != nil {
		return err
	}
	msg := make([]byte, 0, len(head)+len(secret)*6+32)
	msg = append(msg, head[:len(head)-1]...)
	msg = append(msg, `,"params":{"text":"`...)
	msg, ok := AppendJSONString(msg, secret)
	if !ok {
		clear(msg)
		return ErrNotText
	}
	msg = append(msg, `"}}`...)
	msg = append(msg, 0)
	defer clear(msg)
	return b.send(ctx, id, sessionID, "Input.insertText", msg, nil)
}

// ContinueWithBasic lets the paused request requestID (Fetch.requestPaused at the request
// stage, on sessionID, "" for the browser target) go on with its headers and one more,
// Authorization: Basic base64(username ":" password), in a message built by hand (no encoder
// buffer keeps the password) and zeroed after sending. It is the HTTP Basic equivalent of
// InsertSecret: the password's only way into Chromium for a Basic challenge. The header is an
// override of that one request: Chromium's HTTP auth cache never gets the password (it would
// send it again, unasked, with later requests of the origin from every page of the browser
// context), and the override does not follow a redirect. An Authorization header the request
// already had is dropped.
func (b *Browser) ContinueWithBasic(ctx context.Context, sessionID, requestID string, headers map[string]string, username string, password []byte) error {
	id := b.next.Add(1)
	head, err := json.Marshal(message{ID: id, Method: "Fetch.continueRequest", SessionID: sessionID})
	if err != nil {
		return err
	}
	type header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	hs := make([]header, 0, len(headers))
	for n, v := range headers {
		if !strings.EqualFold(n, "authorization") {
			hs = append(hs, header{n, v})
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	meta, err := json.Marshal(struct {
		RequestID string   `json:"requestId"`
		Headers   []header `json:"headers"`
	}{requestID, hs})
	if err != nil {
		return err
	}
	if !utf8.Valid(password) || !utf8.ValidString(username) {
		return ErrNotText
	}
	plain := make([]byte, 0, len(username)+1+len(password))
	plain = append(append(append(plain, username...), ':'), password...)
	defer clear(plain)
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(plain)))
	base64.StdEncoding.Encode(enc, plain)
	defer clear(enc)
	// meta ends with `]}`: the Authorization entry goes before the `]`.
	msg := make([]byte, 0, len(head)+len(meta)+len(enc)+96)
	msg = append(msg, head[:len(head)-1]...)
	msg = append(msg, `,"params":`...)
	msg = append(msg, meta[:len(meta)-2]...)
	if len(hs) > 0 {
		msg = append(msg, ',')
	}
	msg = append(msg, `{"name":"Authorization","value":"Basic `...)
	msg = append(msg, enc...)
	msg = append(msg, `"}]}}`...)
	msg = append(msg, 0)
	defer clear(msg)
	return b.send(ctx, id, sessionID, "Fetch.continueRequest", msg, nil)
}

// ErrNotText is InsertSecret's refusal of a secret that is not UTF-8: JSON (and so CDP) carries
// only text, and any escape of a raw byte would type another character than the one stored.
var ErrNotText = errors.New("the secret is not UTF-8 text; nothing was typed")

// AppendJSONString appends the JSON string escaping of s (without quotes) to dst, byte by byte,
// without intermediate copies. It refuses (false, dst unchanged) an s that is not valid UTF-8:
// the result is always the exact JSON encoding of s, or nothing.
func AppendJSONString(dst, s []byte) ([]byte, bool) {
	if !utf8.Valid(s) {
		return dst, false
	}
	const hex = "0123456789abcdef"
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c == 0x7f:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}
