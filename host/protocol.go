package host

import (
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/profile"
)

// control.sock's protocol is package control (the CLI and the MCP server use its client); the
// host serves it with these same types, named here as the host's code names them.
type (
	SessionParams           = control.SessionParams
	CreateParams            = control.CreateParams
	SessionInfo             = control.SessionInfo
	SessionList             = control.SessionList
	VisitParams             = control.VisitParams
	PageResult              = control.PageResult
	AuthRequired            = control.AuthRequired
	SnapshotResult          = control.SnapshotResult
	RefParams               = control.RefParams
	FillParams              = control.FillParams
	FillResult              = control.FillResult
	PressParams             = control.PressParams
	WaitParams              = control.WaitParams
	SelectParams            = control.SelectParams
	SelectResult            = control.SelectResult
	HoverResult             = control.HoverResult
	ScrollParams            = control.ScrollParams
	ScrollResult            = control.ScrollResult
	ScreenshotParams        = control.ScreenshotParams
	ScreenshotResult        = control.ScreenshotResult
	Status                  = control.Status
	Ready                   = control.Ready
	LegacyProfile           = control.LegacyProfile
	ClearResult             = control.ClearResult
	AuthParams              = control.AuthParams
	AuthResult              = control.AuthResult
	Evidence                = control.Evidence
	EnrollParams            = control.EnrollParams
	EnrollResult            = control.EnrollResult
	EnrollSaveParams        = control.EnrollSaveParams
	EnrollTokenParams       = control.EnrollTokenParams
	EnrollSaved             = control.EnrollSaved
	EnrollDiscarded         = control.EnrollDiscarded
	CredentialsListParams   = control.CredentialsListParams
	CredentialsAddParams    = control.CredentialsAddParams
	CredentialsRemoveParams = control.CredentialsRemoveParams
	VerifyParams            = control.VerifyParams
	VerifyResult            = control.VerifyResult
	JourneyRunParams        = control.JourneyRunParams
)

// DefaultSession always exists.
const DefaultSession = control.DefaultSession

// legacyProfiles is the profile package's report of older-layout profiles left in place, in
// control.sock's terms.
func legacyProfiles(in []profile.LegacyProfile) []LegacyProfile {
	var out []LegacyProfile
	for _, l := range in {
		out = append(out, LegacyProfile{Path: l.Path, Reason: string(l.Reason), Detail: l.Detail})
	}
	return out
}
