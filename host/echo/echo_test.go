package echo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

const pw = `pä ss/w<o>rd&"q'+~*x`

// echoes are the ways real servers write what they received back into a page.
func echoes(account, pw string) map[string]string {
	goJSON, _ := json.Marshal(pw)
	var noHTML bytes.Buffer
	enc := json.NewEncoder(&noHTML)
	enc.SetEscapeHTML(false)
	enc.Encode(pw)
	return map[string]string{
		"as typed":              pw,
		"url.QueryEscape":       url.QueryEscape(pw),
		"url.PathEscape":        url.PathEscape(strings.ReplaceAll(pw, "/", "")), // PathEscape keeps some; see below
		"form-urlencoded lower": strings.ToLower(url.QueryEscape(pw)),
		"html.EscapeString":     html.EscapeString(pw),
		"json.Marshal":          strings.Trim(string(goJSON), `"`),
		"json no HTML":          strings.Trim(strings.TrimSpace(noHTML.String()), `"`),
		"base64 password":       base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64url password":    base64.URLEncoding.EncodeToString([]byte(pw)),
		"Authorization: Basic":  "Basic " + base64.StdEncoding.EncodeToString([]byte(account+":"+pw)),
		"php htmlspecialchars":  strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#039;").Replace(pw),
		"python html.escape":    strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(pw),
		"python json.dumps":     `p\u00e4 ss/w<o>rd&\"q'+~*x`,
		"php json_encode":       `p\u00e4 ss\/w<o>rd&\"q'+~*x`,
		"encodeURIComponent":    "p%C3%A4%20ss%2Fw%3Co%3Erd%26%22q'%2B~*x",
	}
}

func TestEveryEchoFound(t *testing.T) {
	s := New()
	s.Add([]byte(pw), "alice@example.test")
	for name, e := range echoes("alice@example.test", pw) {
		if name == "url.PathEscape" {
			continue
		}
		page := "<p>You typed: " + e + "</p> and more"
		if !s.MatchString(page) {
			t.Errorf("%s: %q not found", name, e)
		}
		// The host's answer: the page text inside a JSON string as encoding/json writes it.
		j, _ := json.Marshal(map[string]string{"text": page})
		if !s.MatchJSON(j) {
			t.Errorf("%s: not found in the JSON answer %s", name, j)
		}
	}
}

func TestNoFalseMatch(t *testing.T) {
	s := New()
	s.Add([]byte("correct-horse-battery"), "alice")
	s.AddCode([]byte("426089"))
	for _, page := range []string{
		"", "abc", "correct-horse-batter", "orrect-horse-battery", "correct horse battery", "Correct-Horse-Batter", "c0rrect-horse-battery",
		"426088", "42608", "The code 4260 89 is not valid", strings.Repeat("correct-horse-", 1000),
	} {
		if s.MatchString(page) {
			t.Errorf("%q matched", page)
		}
	}
	for _, v := range []string{"CORRECT-HORSE-BATTERY", "correct-horse-battery", "yrettab-esroh-tcerroc", "Correct-Horse-Battery", "YRETTAB-esroh-tcerroc"} {
		if !s.MatchString("title: " + v) {
			t.Errorf("%q not found", v)
		}
	}
	if !s.MatchString("The code 426089 is not valid") || !s.MatchString("xx correct-horse-battery") {
		t.Error("the code or the password was not found")
	}
	if !s.MatchString("correct-horse-battery") || !s.Match([]byte("426089")) {
		t.Error("a whole text that is the secret was not found")
	}
}

func TestShortAndEmpty(t *testing.T) {
	s := New()
	if !s.Empty() || s.MatchString("anything") {
		t.Fatal("an empty set matched")
	}
	s.Add([]byte("abc"), "") // too short for every form but its encodings
	if s.MatchString("abc") {
		t.Error("a secret shorter than MinLen matched as typed")
	}
	if !s.MatchString("YWJj") { // base64("abc") is 4 bytes
		t.Error("base64 of a short secret was not kept")
	}
}

func TestOldestDropped(t *testing.T) {
	s := New()
	s.Add([]byte("first-secret-0"), "")
	for i := 0; i < MaxSecrets; i++ {
		s.Add([]byte("secret-number-"+strings.Repeat("x", i)), "")
	}
	if s.MatchString("first-secret-0") {
		t.Error("the oldest secret was kept past MaxSecrets")
	}
	if !s.MatchString("secret-number-") || len(s.secrets) != MaxSecrets {
		t.Errorf("kept %d secrets", len(s.secrets))
	}
}

// TestNoPlaintextKept looks through every byte the Set holds for the secret's forms.
func TestNoPlaintextKept(t *testing.T) {
	s := New()
	secret := []byte("cnry-0123456789abcdef")
	s.Add(secret, "alice")
	s.AddCode([]byte("426089"))
	var held []byte
	for _, es := range s.secrets {
		held = append(held, unsafe.Slice((*byte)(unsafe.Pointer(&es[0])), len(es)*int(unsafe.Sizeof(es[0])))...)
	}
	for _, f := range [][]byte{secret, []byte("0123456789"), []byte("426089"), []byte(base64.RawStdEncoding.EncodeToString(secret))} {
		if bytes.Contains(held, f) {
			t.Errorf("the set holds %q", f)
		}
	}
	if reflect.TypeOf(entry{}).NumField() != 4 {
		t.Error("entry gained a field: check that it holds no plaintext")
	}
}

func BenchmarkScan200K(b *testing.B) {
	s := New()
	for i := 0; i < 8; i++ {
		s.Add([]byte("cnry-password-"+strings.Repeat("y", i)), "alice@example.test")
		s.AddCode([]byte("42608" + string(rune('0'+i))))
	}
	page := []byte(strings.Repeat(`{"ref":"e12","kind":"link","text":"Read the docs & more <here>"},`, 3000))
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.MatchJSON(page) || s.Match(page) {
			b.Fatal("matched")
		}
	}
}
