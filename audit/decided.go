package audit

import (
	"slices"

	"github.com/headless-dev/headless/internal/clip"
)

// What only the person's answer makes. Records an agent can make at will — an add or a remove
// on broker.sock, an isolated session's add, a refusal (PEER_NOT_HOST …) — are many and cheap;
// a release or a file the person was asked for and answered, or a hand-over's answer, takes the
// person. brokerd keeps the latter apart, in its state directory, MaxDecided of each kind, so
// that no amount of the former displaces them: 'audit verify' names those that rotated out of
// the log, and those that went to another log of the user's ([Report.Elsewhere]).

// MaxDecided bounds the person's decisions brokerd keeps, per kind ([DecidedKind]): the
// newest of each. There are at most eight kinds.
const MaxDecided = 64

// maxDecidedField bounds every string field of a kept decision, in bytes: enough to name it
// (alias, origin, account, session, file), so that all of them fit one small file.
const maxDecidedField = 128

// DecidedKind is the kind of person's decision r records ("release/allow",
// "release/deny/PRESENCE_DENIED", "handover/done" …), "" when r is not one: a release or a file
// approval the person allowed, denied at the prompt or let time out, and a hand-over the person
// finished or declined. A refusal before anyone was asked, or a request withdrawn while asked,
// is not.
func DecidedKind(r Record) string {
	switch r.Op {
	case "release", "file_add":
		switch {
		case r.Decision == "allow":
			return r.Op + "/allow"
		case r.Decision == "deny" && (r.Code == "PRESENCE_DENIED" || r.Code == "PRESENCE_TIMEOUT"):
			return r.Op + "/deny/" + r.Code
		}
	case "handover":
		if r.Decision == "done" || r.Decision == "declined" {
			return r.Op + "/" + r.Decision
		}
	}
	return ""
}

// Brief is what brokerd keeps of a person's decision r: its seq, time, op, decision and code,
// and what names it (origin, account, alias, session, provider, page, what was released, a
// file's detail), each string cut to maxDecidedField bytes; no process chain, no MAC.
func Brief(r Record) Record {
	b := Record{Seq: r.Seq, Time: r.Time, Op: r.Op, Decision: r.Decision, Code: r.Code, Origin: r.Origin, Account: r.Account,
		Alias: r.Alias, Session: r.Session, Provider: r.Provider, Path: r.Path, Released: slices.Clone(r.Released), Detail: r.Detail}
	for _, p := range []*string{&b.Op, &b.Decision, &b.Code, &b.Origin, &b.Account, &b.Alias, &b.Session, &b.Provider, &b.Path, &b.Detail} {
		*p = clip.Text(*p, maxDecidedField)
	}
	if len(b.Released) > 4 {
		b.Released = b.Released[:4]
	}
	for i := range b.Released {
		b.Released[i] = clip.Text(b.Released[i], 16)
	}
	return b
}

// KeepDecided adds the brief of r, a person's decision, to kept (oldest first) and drops the
// oldest of its kind beyond MaxDecided; records of other kinds stay as they are.
func KeepDecided(kept []Record, r Record) []Record {
	kind := DecidedKind(r)
	out := append(slices.Clone(kept), Brief(r))
	n := 0
	for _, k := range out {
		if DecidedKind(k) == kind {
			n++
		}
	}
	return slices.DeleteFunc(out, func(k Record) bool {
		if n > MaxDecided && DecidedKind(k) == kind {
			n--
			return true
		}
		return false
	})
}

// Span is a run of seqs, From to To.
type Span struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}
