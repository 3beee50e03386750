package host

import (
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/profile"
)

// InspectProfile reports the durable profile of layout for a doctor, read-only: its path,
// whether it exists, what the next start's check would object to, and the live owner recorded
// in its lock. It takes no lock and changes nothing, so it is safe while a host runs.
func InspectProfile(layout xdg.Layout) (control.ProfileFacts, error) {
	dir, err := layout.Profile()
	if err != nil {
		return control.ProfileFacts{}, err
	}
	lock, err := layout.ProfileLock()
	if err != nil {
		return control.ProfileFacts{}, err
	}
	f := profile.Inspect(dir, lock, procstat.Alive)
	return control.ProfileFacts{Path: dir, Exists: f.Exists, Problem: f.Problem, LockPID: f.LockPID}, nil
}
