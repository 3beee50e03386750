// Package archtest keeps the import graph honest: the graph is the trust boundary (see
// ARCHITECTURE.md, "Packages"), and its test fails, naming the offending import chain, when a
// change breaks one of these rules, for linux and darwin builds alike:
//
//   - cmd/headless (the CLI, the browser host, later MCP: the agent-facing binary) never
//     depends on vault, internal/broker (the release gate), internal/presence, challenge,
//     audit (the writer; the CLI reads the log with internal/auditlog), internal/hostproc
//     (brokerd's host supervisor) or internal/seal (what opens a sealed credential).
//   - D-Bus code (github.com/godbus/...) reaches cmd/headless only through internal/keyprobe,
//     the read-only Secret Service probe for Chromium's cookie key.
//   - vault and challenge know no browser: they never depend on host, host/... (cdp,
//     snapshot), profile or the CLI.
//   - internal/broker is imported only by cmd/brokerd; profile only by host; internal/wire
//     imports nothing of headless, and internal/credential and internal/keyprobe nothing but
//     internal/wire (leaves: their sentinels carry wire codes).
//   - host/control (control.sock's protocol and client, under the CLI and the MCP server)
//     links neither the browser engine (host, host/cdp, profile, keyprobe) nor brokerd's side.
//   - No production binary links a test stand-in (presencetest, realtest, fakepinentry).
//
// The test runs `go list -deps` with the toolchain that runs it; it never skips.
package archtest
