package jsonin

// The implementation of Decode before its one-pass scanner (git history:
// validate, normalise with nested decoders, decode), kept as the oracle of
// FuzzDecodeMatchesReference: the scanner must answer every input as it did.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
)

func refDecode(raw json.RawMessage, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsEmptyArray(raw) || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if raw[0] != '{' {
		return errorOf(NotObject, "", "", "%s must be a JSON object, got %s", what, Kind(raw))
	}
	if !json.Valid(raw) {
		return decodeInto(raw, dst, what) // the decoder names the syntax error
	}
	norm, err := refNormalize(raw, reflect.TypeOf(dst), "", what)
	if err != nil {
		return err
	}
	return decodeInto(norm, dst, what)
}

// normalize checks the valid JSON text raw against the Go type t it is to
// be decoded into, and returns the text to decode: the rules of Decode that
// encoding/json does not apply. A value of a type with its own UnmarshalJSON
// (json.RawMessage among them) is left as it is, for that decoder; a value
// of the wrong JSON type is left too: the decoder then names the field and
// the type. field is the JSON name of the value's field ("" for an element
// or the whole input); where names the place for errors
// ("arguments.items[2]").
func refNormalize(raw json.RawMessage, t reflect.Type, field, where string) (json.RawMessage, error) {
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
		return raw, refCheckDuplicates(raw, where)
	case reflect.Struct, reflect.Map:
		switch {
		case IsEmptyArray(raw):
			return json.RawMessage("{}"), nil
		case raw[0] == 'n' && t.Kind() == reflect.Struct && !pointer:
			return nil, errorOf(WrongType, field, "an object", "%s must be an object, got null", where)
		case raw[0] != '{':
			return raw, nil
		}
		return refNormalizeObject(raw, t, where)
	case reflect.Slice, reflect.Array:
		switch raw[0] {
		case 'n':
			return nil, errorOf(WrongType, field, "an array", "%s must be an array, got null", where)
		case '[':
			return refNormalizeArray(raw, t.Elem(), field, where)
		}
	}
	return raw, nil
}

// normalizeObject is normalize for a JSON object decoded into a struct or
// a map: every key once, known to the struct, each value normalized, every
// required field present.
func refNormalizeObject(raw json.RawMessage, t reflect.Type, where string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, describeDecodeError(err, where)
	}
	var fields []field
	if t.Kind() == reflect.Struct {
		fields = jsonFields(t, nil)
	}
	seen := map[string]bool{}    // keys given
	present := map[string]bool{} // keys given a value other than null
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
			return nil, errorOf(Duplicate, key, "", "%s: key %q appears twice", where, key)
		}
		seen[key] = true
		present[key] = !bytes.Equal(val, []byte("null"))
		var ft reflect.Type
		if t.Kind() == reflect.Map {
			ft = t.Elem()
		} else if f, ok := fieldNamed(fields, key); ok {
			ft = f.typ
		} else {
			e := errorOf(Unknown, key, "", "%s: unknown field %q", where, key)
			for _, f := range fields {
				e.Known = append(e.Known, f.name)
			}
			return nil, e
		}
		if val, err = refNormalize(val, ft, key, where+"."+key); err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	for _, f := range fields {
		if f.required && !present[f.name] {
			return nil, errorOf(Missing, f.name, "", "%s: field %q is required", where, f.name)
		}
		if f.given && !seen[f.name] {
			return nil, errorOf(Missing, f.name, "", "%s: field %q is required (null is allowed)", where, f.name)
		}
	}
	return append(out, '}'), nil
}

// normalizeArray is normalize for a JSON array decoded into a slice or an
// array of elem; field names the array's field.
func refNormalizeArray(raw json.RawMessage, elem reflect.Type, field, where string) (json.RawMessage, error) {
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
		val, err := refNormalize(val, elem, "", fmt.Sprintf("%s[%d]", where, i))
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
// in the JSON text raw, for values without a Go type to check against (a
// field of interface type). One pass over the tokens, whatever the nesting.
func refCheckDuplicates(raw json.RawMessage, where string) error {
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
					return errorOf(Duplicate, v, "", "%s: key %q appears twice", path, v)
				}
				top.keys[v], top.key, top.wantKey = true, v, false
				continue
			}
		}
		next()
	}
}

func fieldNamed(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}
