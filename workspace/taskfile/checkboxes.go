package taskfile

import (
	"bytes"

	"github.com/agentd/agentd/goal"
)

// CountCheckboxes counts the Markdown checkboxes of a task file's content
// (docs/task-files.md, "Checkboxes"): lines that, after any indentation of
// spaces and tabs, are a bullet (`-`, `*` or `+`), at least one space or
// tab, then `[ ]` (open) or `[x]` / `[X]` (checked), followed by the end of
// the line or a space or tab. Lines inside fenced code blocks (``` or ~~~,
// closed by a fence of the same character at least as long) do not count;
// nor do quoted lines (`> - [ ]`) or numbered items. It returns nil when
// the content has no checkbox.
func CountCheckboxes(data []byte) *goal.Checkboxes {
	var c goal.Checkboxes
	var fence []byte // the opening fence of the code block we are in
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if f := fenceOf(line); f != nil {
			switch {
			case fence == nil:
				fence = f
				continue
			case f[0] == fence[0] && len(f) >= len(fence) && len(bytes.TrimSpace(bytes.TrimLeft(bytes.TrimSpace(line), string(f[0])))) == 0:
				fence = nil
				continue
			}
		}
		if fence != nil {
			continue
		}
		if checked, ok := checkbox(line); ok {
			c.Total++
			if checked {
				c.Checked++
			}
		}
	}
	if c.Total == 0 {
		return nil
	}
	return &c
}

// fenceOf returns the fence (three or more backticks or tildes) a line
// opens or closes a fenced code block with, after at most three spaces;
// nil when it is no fence line.
func fenceOf(line []byte) []byte {
	trimmed := bytes.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
		return nil
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == trimmed[0] {
		n++
	}
	if n < 3 {
		return nil
	}
	return trimmed[:n]
}

// checkbox reports whether line is a checkbox item, and whether it is
// checked.
func checkbox(line []byte) (checked, ok bool) {
	line = bytes.TrimLeft(line, " \t")
	if len(line) < 2 || (line[0] != '-' && line[0] != '*' && line[0] != '+') || (line[1] != ' ' && line[1] != '\t') {
		return false, false
	}
	line = bytes.TrimLeft(line[1:], " \t")
	if len(line) < 3 || line[0] != '[' || line[2] != ']' || (len(line) > 3 && line[3] != ' ' && line[3] != '\t') {
		return false, false
	}
	switch line[1] {
	case ' ':
		return false, true
	case 'x', 'X':
		return true, true
	}
	return false, false
}
