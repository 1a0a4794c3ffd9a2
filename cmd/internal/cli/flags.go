package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ParseInterspersed parses flags that may come before or after positional
// arguments (docs/protocol.md §1: `agentd tool TodoList '{}' --workspace .`).
// "--" ends the flags. An argument that starts with "-" but whose name
// holds a space ("-v flag support") is text, not a flag. -h and --help
// return flag.ErrHelp with the positional arguments before them, which
// name the subcommand whose usage is wanted.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags [][]string // each flag with its value, if apart
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if len(a) < 2 || a[0] != '-' || isNumber(a) || strings.ContainsAny(name, " \t\n") {
			positional = append(positional, a)
			continue
		}
		if !hasValue && (name == "h" || name == "help") {
			return positional, flag.ErrHelp
		}
		f := fs.Lookup(name)
		if f == nil {
			given, _, _ := strings.Cut(a, "=")
			return nil, fmt.Errorf("unknown flag %s (see %s --help; to pass text that starts with -, put it after --)", given, fs.Name())
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); hasValue || ok && b.IsBoolFlag() {
			flags = append(flags, []string{a})
			continue
		}
		if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return nil, fmt.Errorf("flag %s needs a value (write %s=VALUE for a value that starts with --)", a, a)
		}
		i++
		flags = append(flags, []string{a, args[i]})
	}
	if err := parseEach(fs, flags); err != nil {
		return nil, err
	}
	return positional, nil
}

// parseEach parses the flags one at a time, so that a bad value is named
// by its flag: `--limit "x" is not a whole number (see agentd --help)`,
// one line, rather than the flag package's message and usage.
func parseEach(fs *flag.FlagSet, flags [][]string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	for _, f := range flags {
		if err := fs.Parse(f); err != nil {
			return badValue(fs, f, err)
		}
	}
	return nil
}

// badValue is the error of flag f (a name and its value, joined by = or
// apart) whose value fs refused with err.
func badValue(fs *flag.FlagSet, f []string, err error) error {
	name, value, _ := strings.Cut(strings.TrimLeft(f[0], "-"), "=")
	if len(f) == 2 {
		value = f[1]
	}
	want := ""
	if g, ok := fs.Lookup(name).Value.(flag.Getter); ok { // ParseInterspersed looked it up
		switch g.Get().(type) {
		case bool:
			want = "not true or false"
		case int, int64:
			want = "not a whole number"
		case uint, uint64:
			want = "not a whole number, 0 or more"
		case time.Duration:
			want = "not a duration (90s, 30m, 1h30m)"
		}
	}
	if want == "" {
		return err
	}
	return fmt.Errorf("--%s %q is %s (see %s --help)", name, value, want, fs.Name())
}

// isNumber says whether a is a number such as -3, which is an argument,
// not a flag.
func isNumber(a string) bool {
	_, err := strconv.ParseFloat(a, 64)
	return err == nil
}
