package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Common holds the optional fields every command accepts (PROTOCOL.md §3).
type Common struct {
	Workspace string `json:"workspace,omitempty"` // folder URI or absolute path
	Session   string `json:"session,omitempty"`   // default: the connection's, else "default"
	Agent     string `json:"agent,omitempty"`     // default "main"
}

func (c *Common) common() *Common { return c }

// withCommon is implemented by every argument struct through embedding Common.
type withCommon interface{ common() *Common }

// UnwrapArguments turns the raw `arguments` of workspace/executeCommand into
// the single ARGS object: omitted, null, [], [{}] and [[]] all mean {}
// (PROTOCOL.md §3). Anything else but a one-element array holding an object
// is an args.invalid error.
func UnwrapArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, argsErrorf("arguments must be an array holding one object, got %s", jsonKind(raw))
	}
	switch len(list) {
	case 0:
		return json.RawMessage("{}"), nil
	case 1:
	default:
		return nil, argsErrorf("arguments must hold one object, got %d elements", len(list))
	}
	one := bytes.TrimSpace(list[0])
	switch {
	case bytes.Equal(one, []byte("null")), isEmptyArray(one):
		return json.RawMessage("{}"), nil
	case len(one) > 0 && one[0] == '{':
		return one, nil
	}
	return nil, argsErrorf("arguments[0] must be an object, got %s", jsonKind(one))
}

// DecodeLenient decodes the JSON object raw into dst, ignoring unknown
// fields (LSP initialize params carry many agentd does not read): absent,
// null and [] mean {}; another non-object, or a field of the wrong type, is
// an error naming it in words a JSON user knows (no Go type names); what
// prefixes the message ("initialize params").
func DecodeLenient(raw json.RawMessage, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isEmptyArray(raw) || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] != '{' {
		return fmt.Errorf("%s must be a JSON object, got %s", what, jsonKind(raw))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return describeDecodeError(err, what)
	}
	return nil
}

// decodeStrict decodes the JSON object raw into dst strictly: unknown
// fields (matched exactly, not ignoring case), duplicate keys, wrong types
// and trailing data are refused, and the error names the place; what says
// what is being decoded ("arguments", "TodoList input") for the message.
// Before decoding, the text is checked against dst's type by normalize:
// this is the one strict decoder of the wire's JSON objects (command
// arguments and tool inputs; docs/behaviour.md "Inputs").
func decodeStrict(raw json.RawMessage, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isEmptyArray(raw) {
		raw = json.RawMessage("{}")
	}
	if raw[0] != '{' {
		return fmt.Errorf("%s must be a JSON object, got %s", what, jsonKind(raw))
	}
	if !json.Valid(raw) {
		return decodeInto(raw, dst, what) // the decoder names the syntax error
	}
	norm, err := normalize(raw, reflect.TypeOf(dst), what)
	if err != nil {
		return err
	}
	return decodeInto(norm, dst, what)
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
		return fmt.Errorf("%s: unexpected data after the object", what)
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// normalize checks the valid JSON text raw against the Go type t it is to
// be decoded into, and returns the text to decode. It applies what
// encoding/json does not (docs/behaviour.md "Inputs"):
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
// A value of a type with its own UnmarshalJSON (json.RawMessage among
// them) is left as it is, for that decoder. A value of the wrong JSON type
// is left too: the decoder then names the field and the type. where names
// the place for errors ("arguments.items[2]").
func normalize(raw json.RawMessage, t reflect.Type, where string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	pointer := false
	for t.Kind() == reflect.Pointer {
		t, pointer = t.Elem(), true
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return raw, nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return raw, checkDuplicates(raw, where)
	case reflect.Struct, reflect.Map:
		switch {
		case isEmptyArray(raw):
			return json.RawMessage("{}"), nil
		case raw[0] == 'n' && t.Kind() == reflect.Struct && !pointer:
			return nil, fmt.Errorf("%s must be an object, got null", where)
		case raw[0] != '{':
			return raw, nil
		}
		return normalizeObject(raw, t, where)
	case reflect.Slice, reflect.Array:
		switch raw[0] {
		case 'n':
			return nil, fmt.Errorf("%s must be an array, got null", where)
		case '[':
			return normalizeArray(raw, t.Elem(), where)
		}
	}
	return raw, nil
}

// normalizeObject is normalize for a JSON object decoded into a struct or
// a map: every key once, known to the struct, each value normalized.
func normalizeObject(raw json.RawMessage, t reflect.Type, where string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, describeDecodeError(err, where)
	}
	var fields map[string]reflect.Type
	if t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	seen := map[string]bool{}
	out := []byte{'{'}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, describeDecodeError(err, where)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, describeDecodeError(err, where)
		}
		if seen[key] {
			return nil, fmt.Errorf("%s: key %q appears twice", where, key)
		}
		seen[key] = true
		var ft reflect.Type
		if fields == nil {
			ft = t.Elem()
		} else if ft = fields[key]; ft == nil {
			return nil, fmt.Errorf("%s: unknown field %q", where, key)
		}
		if val, err = normalize(val, ft, where+"."+key); err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	return append(out, '}'), nil
}

// normalizeArray is normalize for a JSON array decoded into a slice or an
// array of elem.
func normalizeArray(raw json.RawMessage, elem reflect.Type, where string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // [
		return nil, describeDecodeError(err, where)
	}
	out := []byte{'['}
	for i := 0; dec.More(); i++ {
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, describeDecodeError(err, where)
		}
		val, err := normalize(val, elem, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, val...)
	}
	return append(out, ']'), nil
}

// checkDuplicates refuses a key that appears twice in one object anywhere
// in the JSON text raw, for values without a Go type to check against
// (the goal tools' inputs, which the goal package decodes). One pass over
// the tokens, whatever the nesting.
func checkDuplicates(raw json.RawMessage, where string) error {
	type frame struct {
		object  bool
		keys    map[string]bool
		key     string // the current member's key
		wantKey bool
		index   int // the current element's index
	}
	var stack []frame
	next := func() { // a value ended in the innermost container
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return describeDecodeError(err, where)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				next()
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				top := &stack[n-1]
				if top.keys[v] {
					path := where
					for _, f := range stack[:n-1] {
						if f.object {
							path += "." + f.key
						} else {
							path += fmt.Sprintf("[%d]", f.index)
						}
					}
					return fmt.Errorf("%s: key %q appears twice", path, v)
				}
				top.keys[v], top.key, top.wantKey = true, v, false
				continue
			}
		}
		next()
	}
}

// isEmptyArray reports whether raw is [] (spaces allowed inside).
func isEmptyArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && raw[len(raw)-1] == ']' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// jsonFields maps the JSON names of a struct's fields, embedded ones
// included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func describeDecodeError(err error, what string) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fmt.Errorf("%s must be %s, got %s", what, kindWord(typeErr.Type.Kind()), typeErr.Value)
		}
		return fmt.Errorf("%s: field %q must be %s, got %s", what, typeErr.Field, kindWord(typeErr.Type.Kind()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("%s: malformed JSON at byte %d: %v", what, syntaxErr.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: malformed JSON: it ends too early", what)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("%s: unknown field %s", what, f)
	}
	return fmt.Errorf("%s: %s", what, strings.TrimPrefix(msg, "json: "))
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

// jsonKind names the JSON type of raw for error messages.
func jsonKind(raw []byte) string {
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
