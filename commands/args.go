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
	case bytes.Equal(one, []byte("null")), bytes.Equal(one, []byte("[]")):
		return json.RawMessage("{}"), nil
	case len(one) > 0 && one[0] == '{':
		return one, nil
	}
	return nil, argsErrorf("arguments[0] must be an object, got %s", jsonKind(one))
}

// decodeStrict decodes the JSON object raw into dst, rejecting unknown fields,
// wrong types and trailing data. The error names the field; what says what is
// being decoded ("arguments", "input") for the message.
func decodeStrict(raw json.RawMessage, dst any, what string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if t := bytes.TrimSpace(raw); t[0] != '{' {
		return fmt.Errorf("%s must be a JSON object, got %s", what, jsonKind(t))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return describeDecodeError(err, what)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the object", what)
	}
	return exactKeys(raw, reflect.TypeOf(dst), what)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// exactKeys refuses the keys that encoding/json matches only when case is
// ignored ("TODOS" for "todos", or "Status" next to "status"), so that
// inputs are strict as the schemas say (additionalProperties false). raw
// has already decoded into t without error.
func exactKeys(raw json.RawMessage, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		fields := jsonFields(t)
		for key, val := range obj {
			ft, ok := fields[key]
			if !ok {
				return fmt.Errorf("%s: unknown field %q", where, key)
			}
			if err := exactKeys(val, ft, where+"."+key); err != nil {
				return err
			}
		}
	case reflect.Slice:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return nil
		}
		for i, val := range list {
			if err := exactKeys(val, t.Elem(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	}
	return nil
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
