package control

import (
	"context"
	"encoding/json"
	"time"

	"github.com/headless-dev/headless/internal/journey"
)

// JourneyRunParams is journey.run: a plan (package internal/journey), as its JSON. The host
// decodes it strictly (journey.Decode); a plan that does not decode is PLAN_INVALID or
// UNSAFE_SELECTOR and nothing runs.
type JourneyRunParams struct {
	Plan json.RawMessage `json:"plan"`
}

// JourneyWait is how long a caller should wait for journey.run: the longest budget and the
// time to open and dispose of the run's browser context.
const JourneyWait = journey.MaxBudget + 30*time.Second

// JourneyRun walks a journey plan in the host (a fresh browser context unless the plan names
// a session) and returns its report: what the run reviewed, did not review, and why it could
// not look. A run that could not look or failed is a report, not an error: errors are for a
// plan that does not decode and a host that cannot run anything. A login in it asks the
// person, as auth.login does.
func (c *Client) JourneyRun(ctx context.Context, plan []byte) (journey.Report, error) {
	return call[journey.Report](ctx, c, MethodJourneyRun, JourneyRunParams{Plan: plan})
}
