package host

import (
	"context"
	"slices"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// console.list and network.list: a page of the session's page's log (pagelog.go), through the
// host's one pagination (pagination.go). Neither waits for the session's running verb: the log
// is read as it is. An entry that held a released secret when it arrived is never listed: an
// answer that would show it is refused as every output showing one is (SECRET_ON_PAGE, the
// page discarded, audited), and every answer is scanned again as it is sent (echoed.go).

// listLimit checks a page's limit (0: the default).
func listLimit(n int) (int, error) {
	switch {
	case n == 0:
		return control.DefaultListLimit, nil
	case n < 1 || n > control.MaxListLimit:
		return 0, wire.Errorf(wire.CodeInvalidArgument, "limit is from 1 to %d entries (default %d)", control.MaxListLimit, control.DefaultListLimit)
	}
	return n, nil
}

// ConsoleList answers console.list.
func (h *Host) ConsoleList(ctx context.Context, p control.ConsoleParams) (control.ConsoleList, error) {
	level := strings.ToLower(p.Level)
	if level != "" && !slices.Contains(consoleLevels, level) {
		return control.ConsoleList{}, wire.Errorf(wire.CodeInvalidArgument, "level is one of %s", strings.Join(consoleLevels, ", "))
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return control.ConsoleList{}, err
	}
	_, s, err := h.session(ctx, p.Session)
	if err == nil {
		err = s.handedOverErr() // what the person's actions load is not the agent's to list
	}
	if err != nil {
		return control.ConsoleList{}, err
	}
	l := s.pageLog()
	filter := ""
	if level != "" {
		filter = "level=" + level
	}
	out := control.ConsoleList{ListPage: control.ListPage{Session: s.name, Untrusted: true}, Messages: []control.ConsoleMessage{}}
	secret := false
	l.mu.Lock()
	after, err := h.cursors.resume(p.Cursor, s.name, "console", filter, l.gen, l.cLastDropped)
	if err == nil {
		last := uint64(0)
		for _, e := range l.console {
			if level != "" && e.m.Level != level {
				continue
			}
			out.Total++
			if e.seq <= after {
				continue
			}
			if len(out.Messages) == limit {
				out.Next = "more"
				continue
			}
			out.Messages = append(out.Messages, e.m)
			secret = secret || e.secret
			last = e.seq
		}
		if out.Next != "" {
			out.Next = h.cursors.issue(s.name, "console", filter, l.gen, last)
		}
		out.Dropped, out.Stopped = l.cDropped, l.stopped
	}
	l.mu.Unlock()
	if err != nil {
		return control.ConsoleList{}, err
	}
	if secret {
		return control.ConsoleList{}, h.listEchoed(ctx, p.Session, "console list")
	}
	return out, nil
}

// NetworkList answers network.list.
func (h *Host) NetworkList(ctx context.Context, p control.NetworkParams) (control.NetworkList, error) {
	typ := strings.ToLower(p.Type)
	if typ != "" && !slices.Contains(resourceTypes, typ) {
		return control.NetworkList{}, wire.Errorf(wire.CodeInvalidArgument, "type is one of %s", strings.Join(resourceTypes, ", "))
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return control.NetworkList{}, err
	}
	_, s, err := h.session(ctx, p.Session)
	if err == nil {
		err = s.handedOverErr() // what the person's actions load is not the agent's to list
	}
	if err != nil {
		return control.NetworkList{}, err
	}
	l := s.pageLog()
	var fs []string
	if typ != "" {
		fs = append(fs, "type="+typ)
	}
	if p.Failed {
		fs = append(fs, "failed")
	}
	filter := strings.Join(fs, ",")
	keep := func(r control.NetworkRequest) bool {
		return (typ == "" || strings.ToLower(r.Type) == typ) && (!p.Failed || r.Error != "" || r.Status >= 400)
	}
	out := control.NetworkList{ListPage: control.ListPage{Session: s.name, Untrusted: true}, Requests: []control.NetworkRequest{}}
	secret := false
	l.mu.Lock()
	after, err := h.cursors.resume(p.Cursor, s.name, "network", filter, l.gen, l.nLastDropped)
	if err == nil {
		last := uint64(0)
		for _, e := range l.net {
			if !keep(e.r) {
				continue
			}
			out.Total++
			if e.seq <= after {
				continue
			}
			if len(out.Requests) == limit {
				out.Next = "more"
				continue
			}
			out.Requests = append(out.Requests, e.r)
			secret = secret || e.secret
			last = e.seq
		}
		if out.Next != "" {
			out.Next = h.cursors.issue(s.name, "network", filter, l.gen, last)
		}
		out.Dropped = l.nDropped
	}
	l.mu.Unlock()
	if err != nil {
		return control.NetworkList{}, err
	}
	if secret {
		return control.NetworkList{}, h.listEchoed(ctx, p.Session, "network list")
	}
	return out, nil
}

// listEchoed refuses a list that would show a released secret: the session's page is
// discarded (its log with it) and brokerd audits it (echoed.go).
func (h *Host) listEchoed(ctx context.Context, session, output string) error {
	b, s, unlock, err := h.lockSession(ctx, session)
	if err != nil {
		h.reportEcho(ctx, session, "", output)
		return errEchoed
	}
	defer unlock()
	return h.echoed(ctx, b, s, output)
}
