// Package jsonin is agentd's one decoder of the JSON objects it receives:
// command arguments, tool inputs (TodoList and the goal tools), LSP
// initialize params and settings (docs/protocol.md §3.1). Decode is
// strict: unknown fields, duplicate keys, wrong types, missing required
// fields and trailing data are refused; DecodeLenient ignores unknown fields.
// A refusal is the protocol's coded error (protocol.Error) of code
// args.invalid whose cause is an *Error, which names the place in words a
// JSON user knows (no Go type names).
//
// It imports the standard library and commands/protocol (a leaf, for the
// code args.invalid) only, so that every agentd package may use it: todo and goal decode their tool inputs with it; commands decodes
// command arguments; the transport (lsp/jsonrpc) splits messages with its
// scanner (Members, Elements, Compact). It holds no agentd rule beyond the
// shape of JSON input.
package jsonin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"reflect"
	"strings"
)

// CodeArgsInvalid is the stable code of a badly shaped argument or input
// (docs/protocol.md §3), protocol.CodeArgsInvalid. The lsp package
// answers it with JSON-RPC -32602; a tool refusal carries it in errorCode.
const CodeArgsInvalid = protocol.CodeArgsInvalid

// Problem says what is wrong with a JSON input.
type Problem int

// The problems Decode reports.
const (
	Malformed Problem = iota // not valid JSON, or data after the object
	NotObject                // the input (or a value that must be one) is not an object
	Duplicate                // a key appears twice in one object
	Unknown                  // a key the struct does not declare
	Missing                  // a required field is absent or null
	WrongType                // a value of the wrong JSON type
)

// Error is what does not decode in an input: the cause of the refusal,
// which Decode and DecodeLenient return as a protocol.Error of code
// args.invalid with the same message, so that the protocol's is the one
// type that carries a code. Its message names the place
// ("arguments.items[2]: unknown field \"Status\""); callers that word the
// refusal their own way (the goal tools) find it with errors.As and read
// the other fields.
type Error struct {
	Problem Problem
	// Field is the JSON name of the field concerned ("" for the input as a
	// whole or an array element); for a wrong type deep in the input, the
	// dotted path encoding/json reports ("todos.0.title" style).
	Field string
	// Want is what the value must be, for WrongType: "a string", "a
	// number", "a whole number", "true or false", "an array", "an object".
	Want string
	// Known lists the JSON names of the object's fields, in declaration
	// order, for Unknown.
	Known []string
	msg   string
}

func (e *Error) Error() string { return e.msg }

// refusal is err, a decoding problem, as the protocol's refusal of code
// args.invalid; nil stays nil.
func refusal(err error) error {
	if err == nil {
		return nil
	}
	return &protocol.Error{Code: CodeArgsInvalid, Err: err}
}

func errorOf(p Problem, field, want string, format string, args ...any) *Error {
	return &Error{Problem: p, Field: field, Want: want, msg: fmt.Sprintf(format, args...)}
}

// DecodeLenient decodes the JSON object raw into dst, ignoring unknown
// fields (LSP initialize params carry many agentd does not read): absent,
// null and [] mean {}; another non-object, or a field of the wrong type, is
// refused naming it; what prefixes the message ("initialize params").
func DecodeLenient(raw json.RawMessage, dst any, what string) error {
	return refusal(decodeLenient(raw, dst, what))
}

func decodeLenient(raw json.RawMessage, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsEmptyArray(raw) || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] != '{' {
		return errorOf(NotObject, "", "", "%s must be a JSON object, got %s", what, Kind(raw))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return describeDecodeError(err, what)
	}
	return nil
}

// Decode decodes the JSON object raw into dst (a pointer) strictly: absent,
// null and [] mean {}; unknown fields (matched exactly, not ignoring case),
// duplicate keys, wrong types, required fields left out and trailing data
// are refused (an *Error as the cause) naming the place; what says what is being
// decoded ("arguments", "TodoList input") for the message. A struct field
// tagged `jsonin:"required"` must be present and not null; one tagged
// `jsonin:"given"` must be present, and may be null.
//
// The rules besides encoding/json's (docs/protocol.md §3.1):
//   - an empty array where an object (struct or map) is expected is the
//     empty object: Lua clients cannot tell {} from [] and send [];
//   - a key that appears twice in one object is refused (encoding/json
//     would keep the last one silently);
//   - keys must match a struct's JSON names exactly (encoding/json also
//     accepts "TODOS" for "todos");
//   - null is refused where an array is expected, and as an array element
//     where an object is expected (null is not an empty list or item);
//     elsewhere null is an absent value, as encoding/json reads it.
//
// Of several problems in one input, unknown keys and duplicates are found
// first (in the order of the text), then missing required fields, then
// wrong types.
func Decode(raw json.RawMessage, dst any, what string) error {
	return refusal(decode(raw, dst, what))
}

func decode(raw json.RawMessage, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsEmptyArray(raw) || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if raw[0] != '{' {
		return errorOf(NotObject, "", "", "%s must be a JSON object, got %s", what, Kind(raw))
	}
	// The scanner stores the values as it checks them, into a dst that is
	// zero (else, or when it cannot store one, encoding/json decodes).
	t, v := reflect.TypeOf(dst), reflect.Value{}
	if dv := reflect.ValueOf(dst); dv.Kind() == reflect.Pointer && !dv.IsNil() && dv.Elem().IsZero() {
		t, v = t.Elem(), dv.Elem()
	}
	sc := scanner{data: raw}
	err := sc.text(typed, t, v, what)
	if v.IsValid() && (err != nil || sc.fallback) {
		v.SetZero() // as it was
	}
	switch {
	case err == errSyntax:
		return decodeInto(raw, dst, what) // the decoder names the syntax error
	case err != nil && !json.Valid(raw):
		return decodeInto(raw, dst, what) // a syntax error after the problem comes first
	case err != nil:
		return err
	case sc.fallback || !v.IsValid():
		return decodeInto(sc.emptyObjects(raw), dst, what)
	}
	return nil
}

// decodeInto decodes raw into dst with unknown fields refused and nothing
// allowed after the value.
func decodeInto(raw json.RawMessage, dst any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return describeDecodeError(err, what)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorOf(Malformed, "", "", "%s: unexpected data after the object", what)
	}
	return nil
}

// IsEmptyArray reports whether raw is [] (spaces allowed inside).
func IsEmptyArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && raw[len(raw)-1] == ']' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// field is one JSON field of a struct.
type field struct {
	name     string
	typ      reflect.Type
	required bool  // tagged `jsonin:"required"`
	given    bool  // tagged `jsonin:"given"`: present, null allowed
	index    []int // for reflect.Value.FieldByIndex
	// own is false for a field whose key encoding/json might read
	// otherwise than Decode's pass (an embedded field not flattened here,
	// the ",string" option): a struct with one is decoded by encoding/json.
	own bool
}

// Fields lists the JSON names of the fields of the struct type t (a
// pointer to a struct is followed), embedded ones included, in declaration
// order, and which of them are required (tagged `jsonin:"required"`). A
// tool's test compares them with its JSON Schema.
func Fields(t reflect.Type) (names, required []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, f := range jsonFields(t, nil) {
		names = append(names, f.name)
		if f.required {
			required = append(required, f.name)
		}
	}
	return names, required
}

// jsonFields lists the JSON fields of a struct, embedded ones included, in
// declaration order; index is the index sequence of t in the outer struct.
func jsonFields(t reflect.Type, index []int) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		at := append(index[:len(index):len(index)], i)
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type, at)...)
			continue
		case name == "":
			name = f.Name
		}
		own := !f.Anonymous && !strings.Contains(","+opts+",", ",string,")
		out = append(out, field{name: name, typ: f.Type, required: f.Tag.Get("jsonin") == "required", given: f.Tag.Get("jsonin") == "given", index: at, own: own})
	}
	return out
}

func describeDecodeError(err error, what string) *Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		want := kindWord(typeErr.Type.Kind())
		if typeErr.Field == "" {
			return errorOf(WrongType, "", want, "%s must be %s, got %s", what, want, typeErr.Value)
		}
		return errorOf(WrongType, typeErr.Field, want, "%s: field %q must be %s, got %s", what, typeErr.Field, want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return errorOf(Malformed, "", "", "%s: malformed JSON at byte %d: %v", what, syntaxErr.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errorOf(Malformed, "", "", "%s: malformed JSON: it ends too early", what)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return errorOf(Unknown, strings.Trim(f, `"`), "", "%s: unknown field %s", what, f)
	}
	return errorOf(Malformed, "", "", "%s: %s", what, strings.TrimPrefix(msg, "json: "))
}

// kindWord names a Go kind the way a JSON user thinks of it.
func kindWord(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "something else"
}

// Kind names the JSON type of raw for error messages: "an object", "an
// array", "a string", "a boolean", "null", "a number", or "nothing".
func Kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
