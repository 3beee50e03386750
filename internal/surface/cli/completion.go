package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
)

// Shell completion, generated from the command table: the commands, each command's flags,
// and, where it is cheap and never a secret, the values of --session (the running host's
// session names) and --alias (the aliases brokerd lists): 'headless __complete sessions' and
// 'headless __complete aliases' print them, one per line, and start nothing (no host or
// brokerd running: nothing is printed).

// completionData is what every shell's script is made of.
type completionData struct {
	top    []string            // the first word: commands and groups
	subs   map[string][]string // a group's subcommands
	flags  map[string][]string // a command's flags (--name), by its full name
	valued map[string]bool     // flags that take a value
}

func completionTable() completionData {
	c := &cmd{}
	d := completionData{subs: map[string][]string{}, flags: map[string][]string{}, valued: map[string]bool{}}
	for _, command := range c.commands() {
		g, sub, grouped := strings.Cut(command.name, " ")
		if grouped {
			d.subs[g] = append(d.subs[g], sub)
		}
		if !slices.Contains(d.top, g) {
			d.top = append(d.top, g)
		}
		fs := flag.NewFlagSet(command.name, flag.ContinueOnError)
		var j bool
		command.setup(fs)
		commonFlags(fs, &j)
		fl := []string{"--help"}
		fs.VisitAll(func(f *flag.Flag) {
			fl = append(fl, "--"+f.Name)
			if !isBool(f) {
				d.valued["--"+f.Name] = true
			}
		})
		sort.Strings(fl)
		d.flags[command.name] = fl
	}
	d.top = append(d.top, "help")
	return d
}

// Completion writes the completion script of shell: bash, zsh or fish.
func Completion(w io.Writer, shell string) error {
	d := completionTable()
	names := make([]string, 0, len(d.flags))
	for n := range d.flags {
		names = append(names, n)
	}
	sort.Strings(names)
	groups := make([]string, 0, len(d.subs))
	for g := range d.subs {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var b strings.Builder
	switch shell {
	case "bash":
		b.WriteString("# bash completion for headless, generated from its command table ('headless completion bash').\n")
		b.WriteString("_headless() {\n  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} key flags=\n")
		b.WriteString("  case $prev in\n    --session) COMPREPLY=($(compgen -W \"$(headless __complete sessions 2>/dev/null)\" -- \"$cur\")); return ;;\n")
		b.WriteString("    --alias) COMPREPLY=($(compgen -W \"$(headless __complete aliases 2>/dev/null)\" -- \"$cur\")); return ;;\n  esac\n")
		fmt.Fprintf(&b, "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(d.top, " "))
		b.WriteString("  key=${COMP_WORDS[1]}\n  case $key in\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "    %s) if [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi; key=\"$key ${COMP_WORDS[2]}\" ;;\n", g, strings.Join(d.subs[g], " "))
		}
		b.WriteString("  esac\n  case $key in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %q) flags=%q ;;\n", n, strings.Join(d.flags[n], " "))
		}
		b.WriteString("  esac\n  case $cur in -*) COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")) ;; esac\n}\ncomplete -F _headless headless\n")
	case "zsh":
		b.WriteString("#compdef headless\n# zsh completion for headless, generated from its command table ('headless completion zsh').\n")
		b.WriteString("local cur=${words[CURRENT]} prev=${words[CURRENT-1]} key\n")
		b.WriteString("case $prev in\n  --session) compadd -- ${(f)\"$(headless __complete sessions 2>/dev/null)\"}; return ;;\n")
		b.WriteString("  --alias) compadd -- ${(f)\"$(headless __complete aliases 2>/dev/null)\"}; return ;;\nesac\n")
		fmt.Fprintf(&b, "if (( CURRENT == 2 )); then compadd -- %s; return; fi\n", strings.Join(d.top, " "))
		b.WriteString("key=${words[2]}\ncase $key in\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "  %s) if (( CURRENT == 3 )); then compadd -- %s; return; fi; key=\"$key ${words[3]}\" ;;\n", g, strings.Join(d.subs[g], " "))
		}
		b.WriteString("esac\nif [[ $cur == -* ]]; then\n  case $key in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %q) compadd -- %s ;;\n", n, strings.Join(d.flags[n], " "))
		}
		b.WriteString("  esac\nfi\n")
	case "fish":
		b.WriteString("# fish completion for headless, generated from its command table ('headless completion fish').\n")
		b.WriteString("complete -c headless -f\n")
		fmt.Fprintf(&b, "complete -c headless -n __fish_use_subcommand -a %q\n", strings.Join(d.top, " "))
		for _, g := range groups {
			fmt.Fprintf(&b, "complete -c headless -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %q\n", g, strings.Join(d.subs[g], " "), strings.Join(d.subs[g], " "))
		}
		for _, n := range names {
			cond := "__fish_seen_subcommand_from " + n
			if g, sub, ok := strings.Cut(n, " "); ok {
				cond = "__fish_seen_subcommand_from " + g + "; and __fish_seen_subcommand_from " + sub
			}
			for _, f := range d.flags[n] {
				name := strings.TrimPrefix(f, "--")
				extra := ""
				switch {
				case f == "--session":
					extra = ` -x -a '(headless __complete sessions 2>/dev/null)'`
				case f == "--alias":
					extra = ` -x -a '(headless __complete aliases 2>/dev/null)'`
				case d.valued[f]:
					extra = " -r"
				}
				fmt.Fprintf(&b, "complete -c headless -n '%s' -l %s%s\n", cond, name, extra)
			}
		}
	default:
		return usagef("completion takes bash, zsh or fish, not %q", clip.Text(shell, 32))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// maxCompletions bounds what __complete prints.
const maxCompletions = 256

// complete answers 'headless __complete sessions|aliases': names, one per line, from what
// already runs (never starting brokerd or the host), within a second; nothing on any error.
func (c *cmd) complete(ctx context.Context, what string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var names []string
	switch what {
	case "sessions":
		if c.env.DialControl == nil {
			return
		}
		cl, err := c.env.DialControl(ctx)
		if err != nil {
			return
		}
		defer cl.Close()
		l, err := cl.Sessions(ctx)
		if err != nil {
			return
		}
		for _, s := range l.Sessions {
			names = append(names, s.Name)
		}
	case "aliases":
		if c.env.DialBroker == nil {
			return
		}
		bc, err := c.env.DialBroker(ctx)
		if err != nil {
			return
		}
		defer bc.Close()
		l, err := bc.List(ctx, "")
		if err != nil {
			return
		}
		for _, cr := range l {
			names = append(names, cr.Alias)
		}
	}
	// Only names of the forms headless itself accepts ([A-Za-z0-9._-]): whatever answers on
	// the sockets, bash's compgen -W expands the words it is given ($(…), backticks), so
	// nothing else may reach it.
	valid := credential.ValidSession
	if what == "aliases" {
		valid = credential.ValidAlias
	}
	for _, name := range completionNames(names, valid) {
		fmt.Fprintln(c.env.Stdout, name)
	}
}

// completionNames keeps, of names, at most maxCompletions that valid accepts and that hold
// nothing a shell expands.
func completionNames(names []string, valid func(string) error) []string {
	var out []string
	for _, name := range names {
		if len(out) == maxCompletions {
			break
		}
		if valid(name) == nil && !strings.ContainsAny(name, "$`\\'\"(){}[]*?~;&|<> \t\n") {
			out = append(out, name)
		}
	}
	return out
}

func (c *cmd) completion(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		return nil, nil, Completion(c.env.Stdout, args[0])
	}
}
