package cli

import "testing"

// TestDidYouMean: an unknown command, subcommand or flag names the nearest known one when it
// is near; a word near nothing gets no suggestion.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"snapshto", "--json"}, `unknown command "snapshto" (did you mean snapshot?)`},
		{[]string{"sesion", "list", "--json"}, `unknown command "sesion" (did you mean session?)`},
		{[]string{"session", "craete", "x", "--json"}, `unknown session subcommand "craete" (did you mean session create?); it takes create, list, close or pages`},
		{[]string{"visit", "https://x.test/", "--sesion", "a", "--json"}, `unknown flag --sesion (did you mean --session?)`},
		{[]string{"wait", "--timout=3s", "--json"}, `unknown flag --timout=3s (did you mean --timeout?)`},
		{[]string{"zzzzzzzz", "--json"}, `unknown command "zzzzzzzz"`},
	} {
		w := newWorld(t)
		if code := w.run(tc.args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if code, msg, _ := w.errOut(); code != "USAGE" || msg != tc.msg {
			t.Errorf("%v: %s %q, want USAGE %q", tc.args, code, msg, tc.msg)
		}
	}
}
