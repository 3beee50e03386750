package cli

import (
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/surface/mcpserver"
	"github.com/headless-dev/headless/internal/wire"
)

// Help that cannot drift (issue 46): every flag a hint, a usage text or an error message
// names exists on the command it names. The texts are found wherever they are written: the
// command table (each command's summary, synopsis, description, flag usages and hints of its
// own), every code's default hint, and every string literal of the module's source that reads
// as prose (wire hints, the host's and brokerd's messages and particular hints, the CLI's
// usage errors). Each is read the same way (mentions): in a sentence, a flag belongs to the
// command named nearest before it ("headless credentials add --login-path", "scroll --by",
// "wait needs --text"), else to the first named after it; a flag in a sentence that names no
// command belongs to the command whose text it is (its table entry, or the CLI code only that
// command runs), and a text of no command (a default hint, a host's message) may name only
// what every command takes: a default hint reaches whatever command met its code.

// flagToken is a flag as text names it: --name (not a format verb, not Chromium's --x--y).
var flagToken = regexp.MustCompile(`--[a-z][a-z0-9-]*[a-z0-9]`)

// wordToken is a word that may name a program or a command, a flag, or a parenthesis.
var wordToken = regexp.MustCompile(`[A-Za-z_][\w./-]*|--[a-z][a-z0-9-]*[a-z0-9]|[()]`)

// foreign programs, whose flags are not headless's.
var foreign = map[string]bool{"brokerd": true, "systemctl": true, "chromium": true, "Chromium": true, "dpkg-statoverride": true,
	"apt": true, "apt-get": true, "sudo": true, "npm": true, "pinentry": true}

// outside are headless's entry points that are not commands of the table: the host process
// brokerd runs (cmd/headless/host.go) and the completion scripts' helper.
var outside = map[string]bool{"host": true, "__complete": true}

// mention is a flag a text names, and the command it belongs to: a command of the table, a
// group ("credentials"), "" for headless itself, "!" for a foreign program, "?" for none
// named before it (after: the first named after it, "" for none).
type mention struct{ cmd, flag, after string }

// mentions reads text: sentence by sentence, each flag with the command named nearest before
// it (a command named in parentheses stays in them), else the first named after it.
func mentions(text string, table []command) []mention {
	names := map[string]bool{}
	for _, c := range table {
		names[c.name] = true
	}
	var out []mention
	for _, sentence := range splitSentences(text) {
		words := wordToken.FindAllString(strings.NewReplacer("`", " ", "'", " ", `"`, " ").Replace(sentence), -1)
		// named[i] is the command words[i] begins to name ("" for none).
		named := make([]string, len(words))
		for i := 0; i < len(words); i++ {
			w := words[i]
			switch {
			case foreign[w]:
				named[i] = "!"
			case w == "headless" && i+1 < len(words):
				// "headless" alone is the product's name, not a mention.
				switch next := words[i+1]; {
				case i+2 < len(words) && names[next+" "+words[i+2]]:
					named[i] = next + " " + words[i+2]
				case names[next] || groups[next] != "":
					named[i] = next
				case outside[next]:
					named[i] = "!"
				case flagToken.FindString(next) == next:
					named[i] = "-"
				}
			default:
				// A command named without "headless": the sentence's subject ("wait needs
				// --text"), or directly followed by a flag ("scroll --by").
				for _, n := range []int{2, 1} {
					if i+n > len(words) || i > 0 && (words[i-1] == "headless" || flagToken.FindString(words[i-1]) == words[i-1]) {
						continue
					}
					name := strings.Join(words[i:i+n], " ")
					if names[name] && (i == 0 || i+n < len(words) && flagToken.FindString(words[i+n]) == words[i+n]) {
						named[i] = name
						break
					}
				}
			}
		}
		var stack []string // the command named so far, by depth of parentheses
		cur := "?"
		for i, w := range words {
			switch {
			case w == "(":
				stack = append(stack, cur)
			case w == ")":
				if len(stack) > 0 {
					cur, stack = stack[len(stack)-1], stack[:len(stack)-1]
				}
			case named[i] != "":
				cur = named[i]
				if cur == "-" {
					cur = ""
				}
			case flagToken.FindString(w) == w:
				m := mention{cmd: cur, flag: strings.TrimPrefix(w, "--")}
				if cur == "?" {
					for _, n := range named[i+1:] {
						if n != "" {
							m.after = strings.TrimPrefix(n, "-")
							break
						}
					}
				}
				out = append(out, m)
			}
		}
	}
	return out
}

// splitSentences cuts text at the ends of its sentences and paragraphs.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		end := text[i] == '\n' && i+1 < len(text) && text[i+1] == '\n' ||
			(text[i] == '.' || text[i] == '?' || text[i] == '!') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')
		if end {
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	return append(out, text[start:])
}

// flagsOf lists the flags of a command as it parses them (--help and -h included).
func flagsOf(cm command) map[string]bool {
	fs := flag.NewFlagSet(cm.name, flag.ContinueOnError)
	var j bool
	cm.setup(fs)
	commonFlags(fs, &j)
	m := map[string]bool{"help": true}
	fs.VisitAll(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// text is one text a person or an agent reads, where it is written and whose it is.
type text struct {
	where  string
	s      string
	owners []string // the commands it is shown for; none: any command may show it
}

func TestHelpNamesOnlyFlagsThatExist(t *testing.T) {
	c := &cmd{env: Env{}.withDefaults()}
	table := c.commands()
	flags := map[string]map[string]bool{}
	universal := map[string]bool{}
	for i, cm := range table {
		flags[cm.name] = flagsOf(cm)
		if i == 0 {
			universal = cloneSet(flags[cm.name])
		}
		for f := range universal {
			if !flags[cm.name][f] {
				delete(universal, f)
			}
		}
	}
	// headless itself: --help and --version.
	flags[""] = map[string]bool{"help": true, "version": true}

	var texts []text
	var dynamic []string
	for _, cm := range table {
		own := []string{cm.name}
		for _, s := range []string{cm.summary, cm.aboutText(), cm.shows, cm.args} {
			texts = append(texts, text{"the table's " + cm.name, s, own})
			dynamic = append(dynamic, s)
		}
		for code, h := range cm.hints {
			texts = append(texts, text{"the table's " + cm.name + " hint for " + string(code), h, own})
			dynamic = append(dynamic, h)
		}
		fs := flag.NewFlagSet(cm.name, flag.ContinueOnError)
		cm.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			texts = append(texts, text{cm.name + " --" + f.Name + "'s usage", f.Usage, own})
			dynamic = append(dynamic, f.Usage)
		})
	}
	for g, s := range groups {
		texts = append(texts, text{"group " + g, s, nil})
	}
	texts = append(texts, text{"the overview", overviewHead + overviewTail, nil})
	for _, code := range wire.Codes() {
		texts = append(texts, text{"the default hint of " + string(code), wire.Hint(code), nil})
	}
	texts = append(texts, sourceTexts(t, table, dynamic)...)

	bad := 0
	for _, tx := range texts {
		for _, m := range mentions(tx.s, table) {
			var fine bool
			var of string
			cmd := m.cmd
			if cmd == "?" && len(tx.owners) == 0 && m.after != "" {
				cmd = m.after
			}
			switch {
			case cmd == "!":
				continue // a foreign program's
			case cmd == "?" && len(tx.owners) > 0:
				fine, of = true, strings.Join(tx.owners, ", ")
				for _, o := range tx.owners {
					fine = fine && flags[o][m.flag]
				}
			case cmd == "?":
				fine, of = universal[m.flag], "every command (a text no command owns may be shown by any)"
			case groups[cmd] != "":
				fine, of = true, "every command of "+cmd
				for _, cm := range table {
					if strings.HasPrefix(cm.name, cmd+" ") {
						fine = fine && flags[cm.name][m.flag]
					}
				}
			default:
				fine, of = flags[cmd][m.flag], "headless "+cmd
			}
			if !fine {
				bad++
				t.Errorf("%s names --%s, which %s does not take:\n    %q", tx.where, m.flag, strings.TrimSpace(of), clipText(tx.s))
			}
		}
	}
	if len(texts) < 200 {
		t.Fatalf("only %d texts looked at: the test looks at too little", len(texts))
	}
	t.Logf("%d texts looked at, %d flags that do not exist", len(texts), bad)
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func cloneSet(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sourceTexts are the module's string literals that read as prose (a space and a flag in
// them), joined where the source concatenates them; a literal that is part of a command's
// table text is looked at there (with its owner). Literals of the CLI belong to the commands
// whose code reaches them (ownersInCLI); elsewhere to none. Chromium's own arguments
// (host/cdp), the tests and the scripts are not texts.
func sourceTexts(t *testing.T, table []command, dynamic []string) []text {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	owners := ownersInCLI(t, table)
	var out []text
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "tests" || rel == "scripts" || rel == filepath.Join("host", "cdp") || rel == filepath.Join("cmd", "brokerd") ||
				d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		n++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		inCLI := filepath.Dir(rel) == filepath.Join("internal", "surface", "cli")
		for _, decl := range f.Decls {
			var own []string
			if inCLI {
				own = owners[declName(decl)]
			}
			ast.Inspect(decl, func(node ast.Node) bool {
				s, ok := stringOf(node)
				if !ok {
					return true
				}
				prose := strings.Contains(s, " ") && flagToken.MatchString(s) && !strings.Contains(s, "$(") // not shell code for a shell
				if prose && !slices.ContainsFunc(dynamic, func(d string) bool { return strings.Contains(d, s) }) {
					out = append(out, text{fset.Position(node.Pos()).String(), s, own})
				}
				return false
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d source files found under %s", n, root)
	}
	return out
}

// stringOf is the value of a string literal, or of literals the source concatenates.
func stringOf(n ast.Node) (string, bool) {
	switch e := n.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		l, ok1 := stringOf(e.X)
		r, ok2 := stringOf(e.Y)
		return l + r, ok1 && ok2
	}
	return "", false
}

// declName names a top-level declaration: a func or method by its name (methods of cmd by
// theirs), a const or var by its first name.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Name.Name
	case *ast.GenDecl:
		for _, sp := range d.Specs {
			if v, ok := sp.(*ast.ValueSpec); ok && len(v.Names) > 0 {
				return v.Names[0].Name
			}
		}
	}
	return ""
}

// ownersInCLI maps each top-level declaration of package cli to the commands whose setup
// reaches it through the package's own calls and references ('headless mcp' aside: what it
// says goes through the MCP server's tool terms).
func ownersInCLI(t *testing.T, table []command) map[string][]string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]map[string]bool{}
	funcs, values := map[string]bool{}, map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					funcs[d.Name.Name] = true
				case *ast.GenDecl:
					if d.Tok == token.CONST || d.Tok == token.VAR {
						for _, sp := range d.Specs {
							for _, n := range sp.(*ast.ValueSpec).Names {
								values[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			imported := map[string]bool{} // doctor.Run is not this package's Run
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				name := path[strings.LastIndexByte(path, '/')+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				imported[name] = true
			}
			for _, d := range f.Decls {
				name := declName(d)
				if refs[name] == nil {
					refs[name] = map[string]bool{}
				}
				ast.Inspect(d, func(n ast.Node) bool {
					switch e := n.(type) {
					case *ast.CallExpr: // helper(…)
						if id, ok := e.Fun.(*ast.Ident); ok && funcs[id.Name] {
							refs[name][id.Name] = true
						}
					case *ast.SelectorExpr: // c.helper, cmd.method
						if x, ok := e.X.(*ast.Ident); ok && imported[x.Name] {
							return false
						}
						if funcs[e.Sel.Name] {
							refs[name][e.Sel.Name] = true
						}
					case *ast.Ident: // a package-level const or var
						if values[e.Name] {
							refs[name][e.Name] = true
						}
					}
					return true
				})
			}
		}
	}
	owners := map[string][]string{}
	for _, cm := range table {
		if cm.name == "mcp" {
			continue
		}
		fn := runtime.FuncForPC(reflect.ValueOf(cm.setup).Pointer()).Name() // …cli.(*cmd).wait-fm
		setup := strings.TrimSuffix(fn[strings.LastIndexByte(fn, '.')+1:], "-fm")
		if !funcs[setup] {
			t.Fatalf("the setup of %s (%s) is not a declaration of the package", cm.name, fn)
		}
		seen := map[string]bool{}
		var walk func(string)
		walk = func(d string) {
			if seen[d] || d == "commands" {
				return
			}
			seen[d] = true
			owners[d] = append(owners[d], cm.name)
			for r := range refs[d] {
				walk(r)
			}
		}
		walk(setup)
	}
	return owners
}

// TestMentions: how a text's flags are tied to commands.
func TestMentions(t *testing.T) {
	table := (&cmd{}).commands()
	for in, want := range map[string][]mention{
		"increase --timeout or check the condition":                           {{"?", "timeout", ""}},
		"list saved aliases with 'headless credentials list --origin ORIGIN'": {{"credentials list", "origin", ""}},
		"wait needs --text, --gone, --url or --ref":                           {{"wait", "text", ""}, {"wait", "gone", ""}, {"wait", "url", ""}, {"wait", "ref", ""}},
		"scroll --by is at most 100000 pixels":                                {{"scroll", "by", ""}},
		"retry with --new-login-path (once), or add it: headless credentials add --login-path": {{"?", "new-login-path", "credentials add"},
			{"credentials add", "login-path", ""}},
		"start it with 'headless start'. Then --session S names it":                              {{"?", "session", ""}},
		"(systemctl --user stop brokerd.socket)":                                                 {{"!", "user", ""}},
		"run 'headless --help'; brokerd --auto, started by headless --json":                      {{"", "help", ""}, {"!", "auto", ""}, {"", "json", ""}},
		"open the page first (headless visit --session S URL), run this with --session S --wait": {{"visit", "session", ""}, {"?", "session", ""}, {"?", "wait", ""}},
		"case $prev in --session) COMPREPLY=($(headless __complete sessions))":                   {{"?", "session", "!"}},
	} {
		if got := mentions(in, table); !slices.Equal(got, want) {
			t.Errorf("mentions(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestMCPHelpListsTheTools: 'headless mcp --help' names exactly the tools tools/list returns.
func TestMCPHelpListsTheTools(t *testing.T) {
	w := newWorld(t)
	if code := w.run("mcp", "--help"); code != 0 {
		t.Fatalf("mcp --help: exit %d", code)
	}
	help := w.stdout.String()
	_, list, ok := strings.Cut(help, "MCP tools over stdio:")
	list, _, _ = strings.Cut(list, ".")
	if !ok {
		t.Fatalf("mcp --help lists no tools:\n%s", help)
	}
	var named []string
	for _, n := range strings.Split(list, ",") {
		named = append(named, strings.TrimSpace(n))
	}

	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go mcpserver.New(mcpserver.Options{}).Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "unit", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tl := range res.Tools {
		listed = append(listed, tl.Name)
	}
	slices.Sort(named)
	slices.Sort(listed)
	if !slices.Equal(named, listed) {
		t.Errorf("mcp --help names %v\ntools/list returns %v", named, listed)
	}
}

// TestTimeoutHintNamesOnlyItsCommandsFlag: TIMEOUT's hint names --timeout on the commands that
// take it (visit, wait), and no flag on one that does not (back); visit --timeout reaches the
// host as timeout_ms, bounded like wait's.
func TestTimeoutHintNamesOnlyItsCommandsFlag(t *testing.T) {
	w := newWorld(t)
	late := wire.Errorf(wire.CodeTimeout, "the page did not finish loading within 30s")
	w.host = &rpc.Methods{}
	rpc.Handle(w.host, control.MethodVisit, func(context.Context, control.VisitParams) (control.PageResult, error) {
		return control.PageResult{}, late
	})
	rpc.Handle(w.host, control.MethodWait, func(context.Context, control.WaitParams) (control.PageResult, error) {
		return control.PageResult{}, late
	})
	rpc.Handle(w.host, control.MethodBack, func(context.Context, control.SessionParams) (control.PageResult, error) {
		return control.PageResult{}, late
	})
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"visit", "https://a.example/", "--json"}, visitTimeoutHint},
		{[]string{"wait", "--text", "x", "--json"}, timeoutHint},
		{[]string{"back", "--json"}, wire.Hint(wire.CodeTimeout)},
	} {
		if code := w.run(tc.args...); code != 1 {
			t.Fatalf("%v: exit %d", tc.args, code)
		}
		if c, _, hint := w.errOut(); c != "TIMEOUT" || hint != tc.hint {
			t.Errorf("%v: %s, hint %q; want %q", tc.args, c, hint, tc.hint)
		}
	}
	if strings.Contains(wire.Hint(wire.CodeTimeout), "--") {
		t.Errorf("TIMEOUT's default hint names a flag: %q", wire.Hint(wire.CodeTimeout))
	}

	w.host = fakeHost()
	for _, tc := range []struct {
		flag string
		ms   string
	}{{"", ""}, {"--timeout=2m", `"timeout_ms":120000`}} {
		args := []string{"visit", "https://a.example/", "--json"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		if code := w.run(args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, w.stdout.String())
		}
		got := w.received("host", control.MethodVisit)
		if len(got) != 1 || tc.ms == "" && strings.Contains(string(got[0]), "timeout_ms") || !strings.Contains(string(got[0]), tc.ms) {
			t.Errorf("%v sent %s", args, got)
		}
	}
	for _, bad := range []string{"--timeout=0s", "--timeout=6m"} {
		if code := w.run("visit", "https://a.example/", bad, "--json"); code != 2 {
			t.Errorf("visit %s: exit %d, want 2 (USAGE)", bad, code)
		}
	}
}
