// Package challenge issues and checks single-use release challenges.
//
// # Security contract
//
// A challenge binds one future password release to a browser session, a document (the CDP
// frame/loader identity of the page that holds the login form), an exact canonical origin and an
// expiry. IDs come from crypto/rand.Text (26 base32 characters, 130 bits). A challenge is
// consumed by its first use attempt, successful or not, so an ID can never be replayed.
// The registry is bounded; the clock is injected.
package challenge
