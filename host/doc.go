// Package host is the browser host: one long-lived process per user that owns Chromium on the
// durable profile, its sessions, and the agent-facing control socket (protocol: host/control).
//
// # Guarantees (SECURITY.md has each in full; the file named holds it)
//
//   - Chromium is driven over --remote-debugging-pipe only (host/cdp), never a TCP port, from
//     the user-only config's binary with the allowlisted environment (run.go).
//   - control.sock keeps broker.sock's rules (internal/rpc; server.go): 0600 in a 0700 dir, the
//     peer uid checked, 1 MiB frames, strict decoding, typed errors.
//   - No verb evaluates caller JavaScript or returns a secret; the host's own fixed functions
//     take a caller's values only as arguments (journey_test.go reads the source).
//   - A password is typed only into the verified field of a sign-in form on its origin, with
//     focus checked before and after, after the browser was looked at (intact.go,
//     integrity_linux.go), and is contained while on the page (taint.go): no output carries
//     it, screenshots and page-editing verbs are refused, the fields are emptied or the page
//     discarded before an error is answered.
//   - It leaves the browser only to its credential's origin (and those the person named),
//     never in a URL: from before the first typed character every request of the browser is
//     held and checked (package egress; wayout.go), and WebSockets and WebRTC to other origins
//     are shut on the page and the targets it reaches.
//
// # A sign-in, top to bottom
//
// signin.go (the flow: the page, the challenge, the form — the host's guess from
// host/snapshot's detection, or the fields the agent named: named.go — the release, a two-step
// or code step), fill.go (the checks around typing, the submit), wayout.go and package egress
// (the way out), outcome.go (what the page shows after), taint.go (what stays contained),
// basicauth.go and passkey.go (the other kinds of sign-in), broker.go (the host's side of
// broker.sock).
//   - Navigation is http(s) only, and with an allowlist only to listed hosts (navpolicy.go).
//   - The profile is locked by one host and never launched without its keyring; isolated
//     sessions are separate browser contexts registered with brokerd (sessions.go, broker.go).
//   - Logs record verbs, sessions and codes, never page content or typed text.
//
// # Not guaranteed
//
// Pages are untrusted: their text can try to instruct the agent. Cookies in the durable profile
// are session secrets; whoever can read the profile and use the keyring can reuse them. A host
// not started by brokerd runs, but receives no password (internal/broker/hostproc).
package host
