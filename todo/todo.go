// Package todo owns the todo list of a session: items, their validation, the
// TodoList tool's semantics and the text the model reads (docs/runtime.md §1).
//
// It is pure: no I/O, no clock, no storage. Of agentd it imports only
// jsonin, the one strict decoder of inputs, and nothing outside the
// standard library.
package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/commands/protocol"
)

// Status is the state of one todo item, as the wire carries it;
// docs/runtime.md §1 fixes the three values.
type Status = protocol.TodoStatus

// The only accepted statuses (docs/runtime.md §1).
const (
	Pending    = protocol.TodoPending
	InProgress = protocol.TodoInProgress
	Done       = protocol.TodoDone
)

// Limits of a stored list (docs/runtime.md §1, [agentd] limits). MaxListBytes
// bounds the list's JSON encoding (encoding/json, as the store writes it and
// as it is sent): 200 titles of 500 characters fit when they are ASCII or
// two-byte characters; longer encodings (three- and four-byte characters,
// characters JSON escapes) fit as long as the list stays under 256 KiB
// (docs/reliability.md, Limits).
const (
	MaxItems      = 200       // items in one list
	MaxTitleChars = 500       // characters (runes) of a title after trimming
	MaxListBytes  = 256 << 10 // bytes of the list encoded as JSON
)

// Item is one entry of the list, as the wire carries it. Order of items
// in a list is kept exactly.
type Item = protocol.TodoItem

// Stable error codes of the todo list (docs/runtime.md §3).
const (
	CodeInvalid  = "todo.invalid"  // a proposed list breaks a rule
	CodeConflict = "todo.conflict" // a compare-and-set edit was stale
)

// ValidationError says what is wrong with a proposed list, in words a model
// or a person can act on, and which item. It is the cause of the refusal
// Normalize returns, the protocol's coded error with code CodeInvalid and
// its text (invalid); errors.As finds it there.
type ValidationError struct {
	Index int // 0-based index of the offending item, -1 for the whole list
	Msg   string
}

func (e *ValidationError) Error() string {
	if e.Index < 0 {
		return e.Msg
	}
	return fmt.Sprintf("todos[%d]: %s", e.Index, e.Msg)
}

// invalid is the refusal todo.invalid (docs/runtime.md §3) of the item at
// index (-1: the whole list) for the reason msg.
func invalid(index int, msg string) error {
	ve := &ValidationError{Index: index, Msg: msg}
	return &protocol.Error{Code: CodeInvalid, Msg: ve.Error(), Err: ve}
}

// Normalize validates items and returns the list to store: a fresh slice whose
// titles are trimmed. A title is one line of plain text: a line break inside
// it (\n, \r, \v, \f, U+0085, U+2028, U+2029) would render as extra list
// lines in the model-facing text, and any other control character (C0 with
// TAB, DEL, C1) would reach terminals raw, so both are refused naming the
// character (docs/runtime.md §1.2). The caller's slice is never retained. Errors are
// todo.invalid refusals whose *ValidationError names the limit or the bad
// value; a list whose JSON encoding exceeds MaxListBytes is refused as a
// whole (Index -1).
func Normalize(items []Item) ([]Item, error) {
	if len(items) > MaxItems {
		return nil, invalid(-1, fmt.Sprintf("the list has %d items; at most %d are allowed, so merge or drop some", len(items), MaxItems))
	}
	out := make([]Item, len(items))
	for i, it := range items {
		title := strings.TrimSpace(it.Title)
		if title == "" {
			return nil, invalid(i, "title is empty; every item needs a short description of the work")
		}
		if n := utf8.RuneCountInString(title); n > MaxTitleChars {
			return nil, invalid(i, fmt.Sprintf("title is %d characters long; at most %d are allowed", n, MaxTitleChars))
		}
		if msg := titleCharProblem(title); msg != "" {
			return nil, invalid(i, msg)
		}
		if !it.Status.Valid() {
			return nil, invalid(i, fmt.Sprintf("status %q is not valid; use one of %q, %q or %q", it.Status, Pending, InProgress, Done))
		}
		out[i] = Item{Title: title, Status: it.Status}
	}
	if n := encodedSize(out); n > MaxListBytes {
		return nil, invalid(-1, fmt.Sprintf("the list takes %d bytes as JSON; at most %d (256 KiB) are allowed, so shorten titles or merge items", n, MaxListBytes))
	}
	return out, nil
}

// titleCharProblem says what is wrong with the first line break or control
// character in title, or "" when it has none.
func titleCharProblem(title string) string {
	for _, r := range title {
		switch {
		case isLineBreak(r):
			return fmt.Sprintf("title has a line break (%U); a title is one line (split the work into more items instead)", r)
		case r == '\t':
			return "title has a tab (U+0009); a title is one line of plain text, use a space instead"
		case unicode.IsControl(r):
			return fmt.Sprintf("title has the control character %U; a title is plain text without control characters", r)
		}
	}
	return ""
}

// isLineBreak reports whether r ends a line in Unicode's sense.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\v', '\f', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// encodedSize is the length in bytes of the JSON encoding of items, as
// encoding/json writes it (the size MaxListBytes bounds).
func encodedSize(items []Item) int {
	data, _ := json.Marshal(items) // cannot fail: an Item is two strings
	return len(data)
}

// Clone returns a copy of items that shares no memory with it; nil stays nil
// only for a nil input, so an empty list stays an empty (non-nil) list.
func Clone(items []Item) []Item {
	if items == nil {
		return nil
	}
	return append(make([]Item, 0, len(items)), items...)
}

// Render is the list as the model reads it (docs/runtime.md §1): a header line and
// one "  [status] title" line per item, or "Todo list is empty.".
func Render(items []Item) string {
	if len(items) == 0 {
		return "Todo list is empty."
	}
	var b strings.Builder
	b.WriteString("Current todo list:")
	for _, it := range items {
		fmt.Fprintf(&b, "\n  [%s] %s", it.Status, it.Title)
	}
	return b.String()
}

// RenderNumbered is the list as the stale reminder shows it (docs/runtime.md §1.1):
// "Current todo list:" then "1. [status] title" lines, no indent.
func RenderNumbered(items []Item) string {
	var b strings.Builder
	b.WriteString("Current todo list:")
	for i, it := range items {
		fmt.Fprintf(&b, "\n%d. [%s] %s", i+1, it.Status, it.Title)
	}
	return b.String()
}
