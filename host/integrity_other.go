//go:build !linux

package host

// foreignCode has no /proc to look at: nothing is found.
func foreignCode(browserPID int, chromium string) (string, error) { return "", nil }
