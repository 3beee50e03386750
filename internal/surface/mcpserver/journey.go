package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

// MaxInlineShots bounds the bytes of a journey's screenshots returned inline as image content
// (beyond it, the report's artifacts still name and hash them).
const MaxInlineShots = 4 << 20

type journeyIn struct {
	Plan journey.Plan `json:"plan" jsonschema:"the plan (decoded strictly by the host)"`
}

// journeyDesc is the plan's grammar, told once (its fields' descriptions stay terse).
const journeyDesc = `Walk a declared UI journey in one call (a fresh browser context unless plan.session), stopping at the first failing action. ` +
	`An action has a kind and the state_id it reaches; a target is role+name (preferred), text or selector. ` +
	`login signs in by alias (a person approves; you never see the password). ` +
	`status: passed, failed, could_not_look (with a reason) or nothing_to_report; evidence (untrusted) and screenshots inline.`

// journeyEnums adds the plan's closed vocabularies to journey_run's input schema.
func journeyEnums(in *jsonschema.Schema) {
	plan := in.Properties["plan"]
	plan.Properties["theme"].Enum = []any{journey.ThemeLight, journey.ThemeDark}
	a := plan.Properties["actions"].Items
	a.Properties["kind"].Enum = []any{journey.KindNavigate, journey.KindClick, journey.KindFill, journey.KindSelect, journey.KindPress,
		journey.KindHover, journey.KindScroll, journey.KindWait, journey.KindAssert, journey.KindLogin}
	a.Properties["assertion"].Enum = []any{journey.AssertVisible, journey.AssertHidden, journey.AssertText, journey.AssertValue,
		journey.AssertEnabled, journey.AssertChecked, journey.AssertCount, journey.AssertRoute}
	a.Properties["match"].Enum = []any{"exact", "contains"}
}

func (s *Server) registerJourney() {
	// Not read-only, and destructive: a journey can click anything (buy, delete); open world.
	addToolSchema(s, "journey_run", "UI journey", journeyDesc, hints{destructive: true, openWorld: true}, journeyEnums,
		func(ctx context.Context, c *call, in journeyIn) (journey.Report, string, error) {
			// The host decodes the plan itself, strictly: it gets the plan as the client
			// wrote it, not as this server's decoder read it.
			var args struct {
				Plan json.RawMessage `json:"plan"`
			}
			if err := json.Unmarshal(c.req.Params.Arguments, &args); err != nil || len(args.Plan) == 0 {
				return journey.Report{}, "", wire.Errorf(wire.CodePlanInvalid, "journey_run needs a plan")
			}
			cl, err := c.client(ctx)
			if err != nil {
				return journey.Report{}, "", err
			}
			stop := c.progress(ctx, fmt.Sprintf("running journey %q (a sign-in waits for the person's approval in headless's prompt)", in.Plan.JourneyID))
			rep, err := cl.JourneyRun(ctx, args.Plan)
			stop()
			if err != nil {
				return rep, "", err
			}
			summary := rep.Summary
			if n := s.inlineShots(c, rep); n < len(rep.Artifacts) {
				summary += fmt.Sprintf("; %d of %d screenshots inline (the rest: see artifacts)", n, len(rep.Artifacts))
			}
			return rep, summary, nil
		})
}

// inlineShots adds the run's screenshots as image content, each checked against the SHA-256
// the host reported, MaxInlineShots bytes in all; it returns how many it added.
func (s *Server) inlineShots(c *call, rep journey.Report) int {
	if s.o.ReadArtifact == nil {
		return 0
	}
	n, total := 0, 0
	for _, a := range rep.Artifacts {
		if total+a.Bytes > MaxInlineShots {
			break
		}
		png, err := s.o.ReadArtifact(a.Path)
		if err != nil {
			s.o.Log.Warn("journey screenshot not read back", "name", a.Name, "err", err)
			continue
		}
		if sum := sha256.Sum256(png); hex.EncodeToString(sum[:]) != a.SHA256 {
			s.o.Log.Warn("journey screenshot on disk is not the one the host hashed", "name", a.Name)
			continue
		}
		c.extra = append(c.extra, &mcp.ImageContent{MIMEType: "image/png", Data: png})
		total += len(png)
		n++
	}
	return n
}
