// Package journey is the plan and the report of a declarative UI journey (`headless journey
// run PLAN.json`, the MCP tool journey_run, control.sock's journey.run): what an agent asks the
// browser host to walk, and what the host answers. The host's runner (package host) walks the
// plan; this package decodes plans, keeps their bounds, and turns what the runner saw into a
// report with "reviewed", "not reviewed" and "could not look" kept apart.
//
// # Security contract
//
// The agent that writes a plan is not trusted: a plan is untrusted input, and every part of a
// report is a possible oracle for a password the host typed. So:
//
//   - [Decode] is strict: one JSON object of at most [MaxPlanBytes], unknown fields refused
//     (and every key of every object must be written exactly as documented: no case variant
//     or duplicate), trailing data refused, nesting bounded, every string and list bounded,
//     at most [MaxActions] actions, a budget of at most [MaxBudget]. Each action kind takes only
//     its own fields; a field that does not apply is refused, not ignored.
//   - A target is an accessible role and name, a visible text, or a CSS selector. Nothing in a
//     plan is ever evaluated as JavaScript: the host resolves roles and names through the
//     accessibility tree (Accessibility.queryAXTree), texts through its own taint-aware page
//     outline, and selectors with DOM.querySelectorAll. A selector that looks like script
//     (javascript:, =>, ;, braces, backticks, eval(, document., window., function, …), uses a
//     CSS escape or comment (which could hide any of that, or an attribute name), or tests an
//     input's value (a [value…] attribute test, or a pseudo-class that matches on the current
//     value such as :placeholder-shown or :invalid) is refused at decode time with
//     UNSAFE_SELECTOR: such a selector could read a prefilled secret one character at a time
//     through count and visible assertions.
//   - Keys are the named keys of `press` ([KeyNames], the host's own set) or one printable
//     character; no modifiers.
//   - A report carries no secret: a login's evidence is its verified outcome (authenticated,
//     failed, unknown), never a value; page-derived strings are bounded, marked untrusted, and
//     come from the host's taint-aware outline (the value of a field the host typed a password
//     into, or of a secret-looking field, is never read). [Report.Finish] never reports passed
//     for a run that looked at nothing or stopped early.
//
// # Not guaranteed
//
//   - A CSS selector may test any attribute but value: a page that keeps a secret in another
//     attribute (a data-* attribute, a meta tag's content) exposes it to a patient plan, as it
//     would to anyone who reads the page. Role names are Chromium's accessible names: a page
//     that names an element after a field's value exposes that value to name matching.
//   - The text of a report (titles, visible text, names) is the page's own: data, not
//     instructions, and a page can print anything it likes in it.
package journey
