//go:build !linux

package host

// browserCheck is what one look at the browser's processes found (see the Linux build).
type browserCheck struct {
	Exposed   int
	Foreign   string
	Strays    []int
	StrayWhat []string
}

// checkBrowser has no /proc to look at: nothing is found.
func checkBrowser(browserPID int, chromium string, root, mappings bool) (browserCheck, error) {
	return browserCheck{}, nil
}

// tree has no /proc to walk: only the root.
func tree(root int) ([]int, error) { return []int{root}, nil }

// strays has no /proc to look at: nothing is found.
func strays() ([]int, []string, error) { return nil, nil, nil }
