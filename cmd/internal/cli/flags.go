package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// ParseInterspersed parses flags that may come before or after positional
// arguments (docs/protocol.md §1: `agentd tool TodoList '{}' --workspace .`).
// "--" ends the flags. An argument that starts with "-" but whose name
// holds a space ("-v flag support") is text, not a flag. -h and --help
// return flag.ErrHelp with the positional arguments before them, which
// name the subcommand whose usage is wanted.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, positional []string
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
		flags = append(flags, a)
		if hasValue {
			continue
		}
		if name == "h" || name == "help" {
			return positional, flag.ErrHelp
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown flag %s (see %s --help; to pass text that starts with -, put it after --)", a, fs.Name())
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return nil, fmt.Errorf("flag %s needs a value (write %s=VALUE for a value that starts with --)", a, a)
		}
		i++
		flags = append(flags, args[i])
	}
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	return positional, nil
}

// isNumber says whether a is a number such as -3, which is an argument,
// not a flag.
func isNumber(a string) bool {
	_, err := strconv.ParseFloat(a, 64)
	return err == nil
}
