package egress

import (
	"net/url"
)

// ChannelRules are the network conditions (the argument of
// Network.emulateNetworkConditionsByRule) that keep shut, in one page target, the channels the
// Fetch domain cannot hold, while a secret may be in the page: a WebSocket to any origin but
// allowed ones is offline (a new one fails, an open one sends nothing), and so is every
// peer-to-peer connection's UDP (WebRTC: the browser applies the rule without a URL pattern to
// them). HTTP requests are left to the Fetch domain (Check): their rules change nothing.
//
// Measured on Chromium 156 (SECURITY.md): the rules hold for the page's own frames in its
// process; a frame of another site, a worker and another window are targets of their own,
// and a WebRTC relay over TCP (TURN) is not held by them.
func ChannelRules(allowed []string) []map[string]any {
	pass := func(pattern string) map[string]any {
		return map[string]any{"urlPattern": pattern, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
	}
	shut := func(pattern string) map[string]any {
		r := pass(pattern)
		r["offline"] = true
		return r
	}
	var rules []map[string]any
	for _, o := range canonical(allowed) {
		u, err := url.Parse(o)
		if err != nil {
			continue
		}
		ws := "ws"
		if u.Scheme == "https" {
			ws = "wss"
		}
		// URL patterns: a host without a port matches only the scheme's default port.
		rules = append(rules, pass(ws+"://"+u.Host+"/*"))
	}
	return append(rules,
		shut("ws://*:*/*"), shut("wss://*:*/*"),
		pass("http://*:*/*"), pass("https://*:*/*"),
		shut(""), // peer-to-peer connections (and nothing else: every URL matched above)
	)
}
