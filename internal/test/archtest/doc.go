// Package archtest keeps the import graph honest: the graph is the trust boundary (see
// ARCHITECTURE.md, "Packages"), and internal/ is grouped by trust side so that a rule is a
// prefix: internal/broker/... is brokerd's side (the gate, presence, the host supervisor, the
// sealing, the audit writer), internal/surface/... the agent-facing surface (the CLI, the MCP
// server, the doctor), internal/test/... test-only harnesses, the rest shared leaves. Its test
// fails, naming the offending import chain, when a change breaks one of these rules, for
// linux and darwin builds alike:
//
//   - cmd/headless (the CLI, the browser host, MCP: the agent-facing binary) never depends on
//     vault, challenge or internal/broker/...
//   - D-Bus code (github.com/godbus/...) reaches cmd/headless only through internal/keyprobe,
//     the read-only Secret Service probe for Chromium's cookie key.
//   - vault and challenge know no browser: they never depend on host, host/..., profile,
//     internal/surface/... or cmd/headless.
//   - internal/surface/... links no host engine (host, host/cdp, host/echo, profile): it talks
//     to the host over control.sock.
//   - internal/broker/gate is imported only by cmd/brokerd; profile only by host; internal/wire
//     imports nothing of headless, and internal/credential and internal/keyprobe nothing but
//     internal/wire (leaves: their sentinels carry wire codes).
//   - host/control (control.sock's protocol and client, under the CLI and the MCP server)
//     links neither the browser engine (host, host/cdp, profile, keyprobe) nor brokerd's side.
//   - No production binary links a test stand-in (presencetest, realtest, fakepinentry).
//
// The test runs `go list -deps` with the toolchain that runs it; it never skips.
package archtest
