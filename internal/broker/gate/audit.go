package gate

import (
	"errors"
	"syscall"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/wire"
)

// Auditor appends one record to the audit log (package audit's *Log). brokerd serves nothing
// without one: a Server whose Audit is nil refuses to serve, and a release whose record cannot
// be appended is refused before the secret leaves.
type Auditor interface {
	Append(auditwriter.Record) error
}

var _ Auditor = (*auditwriter.Log)(nil)

// reserver is an Auditor that can set aside the space of a decision's record before the person
// is asked (package audit's *Log does): a log that cannot take the record (a full disk) then
// refuses the release before anyone is prompted for a release that could not happen.
type reserver interface {
	Reserve() error
}

var _ reserver = (*auditwriter.Log)(nil)

// reserve sets aside the space of a decision's record, when the Auditor can; what names what
// a refusal did not do ("nothing was released").
func (s *Server) reserve(what string) error {
	r, ok := s.Audit.(reserver)
	if !ok {
		return nil
	}
	if err := r.Reserve(); err != nil {
		s.log().Error("audit reserve failed", "err", err)
		return errAudit(err, what)
	}
	return nil
}

// errNoAudit refuses to serve without an audit log.
var errNoAudit = errors.New("broker: no audit log: every release and denial must be recorded, so nothing is served without one")

// record appends an audit record; for a release it must succeed before the secret is sent.
func (s *Server) record(op string, err error, peer Peer, r auditwriter.Record) error {
	if s.Audit == nil {
		return wire.Errorf(wire.CodeAuditUnavail, "there is no audit log; nothing was released")
	}
	r.Op, r.PID = op, peer.PID
	r.Chain = s.chainOf(peer)
	if len(r.Chain) > 0 {
		r.Exe = r.Chain[0].Exe
	}
	// A release and a file's approval are decisions of the person's (allow or deny).
	approval := op == "release" || op == "file_add"
	switch {
	case err == nil && approval:
		r.Decision = "allow"
	case err == nil && op == "handover":
		// r.Decision says what the person answered: done or declined.
	case err == nil:
		r.Decision = "ok"
	case approval:
		r.Decision, r.Code = "deny", string(wire.From(err).Code)
	default:
		r.Decision, r.Code = "error", string(wire.From(err).Code)
	}
	if approval || op == "handover" {
		r.Provider = s.Presence.Name()
	}
	if aerr := s.Audit.Append(r); aerr != nil {
		s.log().Error("audit append failed", "op", op, "err", aerr)
		return errAudit(aerr, "nothing was released")
	}
	return nil
}

// errAudit is AUDIT_UNAVAILABLE for a record that could not be appended or reserved, naming the
// system's reason ("no space left on device") when there is one and what was not done;
// brokerd.log has the whole error.
func errAudit(err error, what string) error {
	why := "see brokerd.log"
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
	}
	return wire.Errorf(wire.CodeAuditUnavail, "the audit log cannot be written (%s); %s", why, what)
}
