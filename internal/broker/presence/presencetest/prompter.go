package presencetest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// SystemPrompterName is the bus name gnome-keyring asks for its prompts (unlock, new
// keyring password). A test that owns it on a private bus plays the person at the dialog.
const SystemPrompterName = "org.gnome.keyring.SystemPrompter"

const (
	prompterPath  = dbus.ObjectPath("/org/gnome/keyring/Prompter")
	prompterIface = "org.gnome.keyring.internal.Prompter"
	callbackIface = "org.gnome.keyring.internal.Prompter.Callback"
)

// Answer is what the scripted person does at one password prompt.
type Answer struct {
	Password string // typed password, answered "yes" (unless Cancel or Hold)
	Cancel   bool   // press Cancel: answered "no"
	Hold     bool   // walk away: never answered (until Prompter.Close or CancelHeld)
	// KeepAutoUnlock leaves the dialog's "automatically unlock this keyring whenever I'm
	// logged in" checkbox ticked (gkd then stores the password in the login keyring).
	KeepAutoUnlock bool
}

// Prompt is one PerformPrompt the keyring sent.
type Prompt struct {
	Type        string // "password" or "confirm"
	Properties  map[string]any
	PasswordNew bool // the "new keyring password" prompt
}

// Prompter is a scripted stand-in for gcr-prompter speaking gnome-keyring's system-prompter
// D-Bus protocol, with the "sx-aes-1" secret exchange (see /work/shared/recipes/PROMPTER.md).
// It is imported only by tests; nothing in a production configuration can reach it.
type Prompter struct {
	conn *dbus.Conn
	x    *big.Int
	pub  *big.Int

	mu       sync.Mutex
	script   []Answer
	fallback Answer
	prompts  []Prompt
	peers    map[string][]byte // callback → gkd's public value
	held     []func(Answer)
	notify   chan struct{}
}

// StartPrompter connects to the bus at addr, exports the prompter and takes name (usually
// [SystemPrompterName]). Prompts with no scripted answer left get fallback. The prompter
// leaves the bus at cleanup.
func StartPrompter(t testing.TB, addr, name string, fallback Answer) *Prompter {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("prompter: connect: %v", err)
	}
	x, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 1535))
	if err != nil {
		t.Fatal(err)
	}
	x.Add(x, big.NewInt(2))
	p := &Prompter{conn: conn, x: x, pub: new(big.Int).Exp(big.NewInt(2), x, sxPrime),
		fallback: fallback, peers: map[string][]byte{}, notify: make(chan struct{}, 1)}
	if err := conn.Export(p, prompterPath, prompterIface); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("prompter: RequestName(%s) = %v, %v", name, reply, err)
	}
	t.Cleanup(p.Close)
	return p
}

// Script queues answers for the next prompts, in order.
func (p *Prompter) Script(answers ...Answer) {
	p.mu.Lock()
	p.script = append(p.script, answers...)
	p.mu.Unlock()
}

// Prompts returns the prompts seen so far.
func (p *Prompter) Prompts() []Prompt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Prompt(nil), p.prompts...)
}

// WaitPrompts waits until at least n prompts were seen or d passed, and returns the count.
func (p *Prompter) WaitPrompts(n int, d time.Duration) int {
	deadline := time.After(d)
	for {
		p.mu.Lock()
		got := len(p.prompts)
		p.mu.Unlock()
		if got >= n {
			return got
		}
		select {
		case <-p.notify:
		case <-deadline:
			return got
		}
	}
}

// AnswerHeld answers every held prompt with a (for example a late approval, or Cancel).
func (p *Prompter) AnswerHeld(a Answer) {
	p.mu.Lock()
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, f := range held {
		f(a)
	}
}

// Close leaves the bus; gnome-keyring then ends any pending prompt as dismissed.
func (p *Prompter) Close() { p.conn.Close() }

// sxPrime is the RFC 3526 1536-bit MODP group of the sx-aes-1 exchange.
var sxPrime, _ = new(big.Int).SetString("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA237327FFFFFFFFFFFFFFFF", 16)

func (p *Prompter) exchange(extra string) string {
	return "[sx-aes-1]\npublic=" + base64.StdEncoding.EncodeToString(p.pub.Bytes()) + "\n" + extra
}

func (p *Prompter) ready(sender dbus.Sender, callback dbus.ObjectPath, reply string, props map[string]dbus.Variant, exchange string) {
	obj := p.conn.Object(string(sender), callback)
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := obj.CallWithContext(ctx, callbackIface+".PromptReady", 0, reply, props, exchange).Err
		cancel()
		// The documented re-send is for a first PromptReady that overtook our reply to
		// BeginPrompting: gkd then never answers it. One that is only slow (a loaded machine)
		// is followed by gkd's PerformPrompt, and a second "" would end that prompt
		// dismissed: re-send only while no PerformPrompt came for this callback.
		if err == nil || reply != "" || attempt == 2 || p.performed(sender, callback) {
			return
		}
	}
}

// performed reports whether gkd sent a PerformPrompt for the prompt at callback.
func (p *Prompter) performed(sender dbus.Sender, callback dbus.ObjectPath) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.peers[string(sender)+string(callback)]
	return ok
}

// BeginPrompting is called by gnome-keyring.
func (p *Prompter) BeginPrompting(sender dbus.Sender, callback dbus.ObjectPath) *dbus.Error {
	go func() {
		time.Sleep(5 * time.Millisecond) // our method reply must be on the wire first
		p.ready(sender, callback, "", map[string]dbus.Variant{}, p.exchange(""))
	}()
	return nil
}

// PerformPrompt is called by gnome-keyring for each (re-)prompt.
func (p *Prompter) PerformPrompt(sender dbus.Sender, callback dbus.ObjectPath, typ string, props map[string]dbus.Variant, exchange string) *dbus.Error {
	key := string(sender) + string(callback)
	var peer []byte
	for _, line := range strings.Split(exchange, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "public="); ok {
			peer, _ = base64.StdEncoding.DecodeString(v)
		}
	}
	pr := Prompt{Type: typ, Properties: map[string]any{}}
	for k, v := range props {
		pr.Properties[k] = v.Value()
	}
	pr.PasswordNew, _ = pr.Properties["password-new"].(bool)
	p.mu.Lock()
	if peer != nil {
		p.peers[key] = peer
	}
	peer = p.peers[key]
	a := p.fallback
	if len(p.script) > 0 {
		a, p.script = p.script[0], p.script[1:]
	}
	p.prompts = append(p.prompts, pr)
	select {
	case p.notify <- struct{}{}:
	default:
	}
	p.mu.Unlock()
	if peer == nil {
		return dbus.MakeFailedError(errors.New("no public value in the exchange"))
	}
	answer := func(a Answer) {
		if a.Cancel || a.Hold {
			p.ready(sender, callback, "no", choice(a), p.exchange(""))
			return
		}
		shared := new(big.Int).Exp(new(big.Int).SetBytes(peer), p.x, sxPrime).Bytes()
		k, _ := hkdf.Key(sha256.New, shared, nil, "", 16)
		block, _ := aes.NewCipher(k)
		iv := make([]byte, 16)
		rand.Read(iv)
		pt := []byte(a.Password)
		n := 16 - len(pt)%16
		pt = append(pt, bytes.Repeat([]byte{byte(n)}, n)...)
		ct := make([]byte, len(pt))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, pt)
		p.ready(sender, callback, "yes", choice(a), p.exchange(
			"secret="+base64.StdEncoding.EncodeToString(ct)+"\niv="+base64.StdEncoding.EncodeToString(iv)+"\n"))
	}
	if a.Hold {
		p.mu.Lock()
		p.held = append(p.held, answer)
		p.mu.Unlock()
		return nil
	}
	go func() {
		time.Sleep(5 * time.Millisecond) // our method reply must be on the wire first
		answer(a)
	}()
	return nil
}

// choice is the properties sent back, double-wrapped as gcr-prompter does: the checkbox
// state, and the password strength (gnome-keyring asks to confirm a "blank" password, of
// strength 0, before it creates a keyring with it).
func choice(a Answer) map[string]dbus.Variant {
	strength := int32(0)
	if a.Password != "" {
		strength = 1
	}
	return map[string]dbus.Variant{
		"choice-chosen":     dbus.MakeVariant(dbus.MakeVariant(a.KeepAutoUnlock)),
		"password-strength": dbus.MakeVariant(dbus.MakeVariant(strength)),
	}
}

// StopPrompting is called by gnome-keyring when the prompt is over.
func (p *Prompter) StopPrompting(sender dbus.Sender, callback dbus.ObjectPath) *dbus.Error {
	p.mu.Lock()
	delete(p.peers, string(sender)+string(callback))
	p.mu.Unlock()
	go p.conn.Object(string(sender), callback).Call(callbackIface+".PromptDone", dbus.FlagNoReplyExpected)
	return nil
}
