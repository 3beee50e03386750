// Package host is the browser host: Chromium driven over a private DevTools pipe.
//
// # Security contract (target; built by the browser-host issue)
//
//   - Chromium is launched with --remote-debugging-pipe only; never a TCP debug port.
//   - The host's control.sock follows broker.sock's rules (0600, peer uid checked, 1 MiB
//     frames, strict decoding, typed errors) and offers no verb that evaluates caller
//     JavaScript or returns a secret.
//   - A released password exists only in host memory between the broker's release reply and
//     CDP Input.insertText into the re-verified field, and is zeroed right after.
//
// This package holds no code yet: the broker half (this issue) comes first.
package host
