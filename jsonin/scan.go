package jsonin

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The one-pass scanner behind Decode, Members, Elements and Compact: it
// walks JSON text once, byte by byte, accepting exactly what json.Valid
// accepts (the grammar of RFC 8259, strings not checked for valid UTF-8,
// at most 10,000 nested arrays and objects), and, given the Go type the
// text is for, applies Decode's rules on the way and stores the values
// (docs/performance.md: one pass instead of a validation, a normalisation
// and a decode). It stores only what it reads exactly as encoding/json
// would: strings, booleans, numbers, pointers, slices, structs and
// json.RawMessage. Any other type, and any value of the wrong JSON type,
// sets fallback: Decode then zeroes the destination and lets encoding/json
// decode the text, and name the wrong type.

// maxDepth is encoding/json's limit on nested arrays and objects.
const maxDepth = 10000

// errSyntax is the scanner's "not valid JSON": the callers then let
// encoding/json describe the text (Decode) or refuse it as they did before.
var errSyntax = errors.New("jsonin: invalid JSON")

// mode is what the scanner checks besides the syntax.
type mode int

const (
	plain mode = iota // the syntax only
	dups              // and no key twice in one object, at any depth (a value of interface type)
	typed             // and the rules of Decode against a Go type
)

// scanner walks one JSON text.
type scanner struct {
	data     []byte
	spaced   bool  // whitespace was skipped somewhere: the text is not compact
	edits    []int // offsets of [] values that Decode reads as {} (a struct or map is expected)
	fallback bool  // typed mode: a value was not stored; encoding/json is to decode the text
}

// place is where a value is, for error messages: rendered only when an
// error names it ("arguments.items[2]").
type place struct {
	parent *place
	root   string // the whole input's name; set on the root only
	key    string // the member's key, when index < 0
	index  int
}

func (p *place) String() string {
	if p.parent == nil {
		return p.root
	}
	if p.index < 0 {
		return p.parent.String() + "." + p.key
	}
	return p.parent.String() + "[" + strconv.Itoa(p.index) + "]"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (s *scanner) skipSpace(i int) int {
	for i < len(s.data) && isSpace(s.data[i]) {
		i++
		s.spaced = true
	}
	return i
}

// text scans one whole JSON text (surrounding whitespace allowed) in mode m
// (for typed, against t, storing into v when v is valid: a zero value of
// type t) and returns its first semantic error, or errSyntax.
func (s *scanner) text(m mode, t reflect.Type, v reflect.Value, root string) error {
	i := s.skipSpace(0)
	end, err := s.value(i, m, t, v, "", &place{root: root}, 0)
	if err != nil {
		return err
	}
	if s.skipSpace(end) != len(s.data) {
		return errSyntax
	}
	return nil
}

// value scans the value at data[i] (no whitespace before it) and returns
// the offset just after it. depth is the number of arrays and objects it is
// inside of. field is the JSON name of the value's field ("" for an array
// element or the whole input), for typed errors.
func (s *scanner) value(i int, m mode, t reflect.Type, v reflect.Value, field string, at *place, depth int) (int, error) {
	if i >= len(s.data) {
		return 0, errSyntax
	}
	if m == typed {
		if s.fallback {
			v = reflect.Value{}
		}
		return s.typedValue(i, t, v, field, at, depth)
	}
	switch c := s.data[i]; {
	case c == '{':
		return s.object(i, m, nil, reflect.Value{}, at, depth+1)
	case c == '[':
		return s.array(i, m, nil, reflect.Value{}, "", at, depth+1)
	case c == '"':
		return s.str(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number(i)
	}
	return 0, errSyntax
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// typedValue is value against the Go type t: the rules of Decode that
// encoding/json does not apply. A value of a type with its own
// UnmarshalJSON (json.RawMessage among them) is that decoder's to judge
// (syntax only); a value of the wrong JSON type is left to encoding/json,
// which names the field and the type. v, when valid, is where the value is
// stored.
func (s *scanner) typedValue(i int, t reflect.Type, v reflect.Value, field string, at *place, depth int) (int, error) {
	c := s.data[i]
	pointer := false
	for t.Kind() == reflect.Pointer {
		if v.IsValid() {
			if c == 'n' { // null leaves the pointer nil, as encoding/json does
				v = reflect.Value{}
			} else {
				p := reflect.New(t.Elem())
				v.Set(p)
				v = p.Elem()
			}
		}
		t, pointer = t.Elem(), true
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		end, err := s.value(i, plain, nil, reflect.Value{}, field, at, depth)
		if err == nil && v.IsValid() {
			if t == rawMessageType {
				v.SetBytes(bytes.Clone(s.data[i:end])) // what RawMessage.UnmarshalJSON keeps, null included
			} else {
				s.fallback = true
			}
		}
		return end, err
	}
	if v.IsValid() && (t.Kind() == reflect.Map || t.Kind() == reflect.Interface || t.Kind() == reflect.Array ||
		reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		s.fallback, v = true, reflect.Value{}
	}
	switch t.Kind() {
	case reflect.Interface:
		return s.value(i, dups, nil, reflect.Value{}, field, at, depth)
	case reflect.Struct, reflect.Map:
		switch {
		case c == '{':
			return s.object(i, typed, t, v, at, depth+1)
		case c == '[':
			end, err := s.array(i, plain, nil, reflect.Value{}, "", at, depth+1)
			if err == nil && s.emptyArray(i, end) {
				s.edits = append(s.edits, i) // {}: the zero struct v already is
			} else if v.IsValid() {
				s.fallback = true
			}
			return end, err
		case c == 'n' && t.Kind() == reflect.Struct && !pointer:
			return 0, errorOf(WrongType, field, "an object", "%s must be an object, got null", at)
		}
	case reflect.Slice, reflect.Array:
		switch c {
		case 'n':
			return 0, errorOf(WrongType, field, "an array", "%s must be an array, got null", at)
		case '[':
			return s.array(i, typed, t.Elem(), v, field, at, depth+1)
		}
	}
	end, err := s.value(i, plain, nil, reflect.Value{}, field, at, depth)
	if err == nil && v.IsValid() && !storeScalar(v, s.data[i:end]) {
		s.fallback = true
	}
	return end, err
}

// storeScalar stores the JSON token tok (a valid string, number, boolean
// or null) in v as encoding/json would, and reports whether it could: a
// token of another type than v's (and a number v cannot hold) is not.
func storeScalar(v reflect.Value, tok []byte) bool {
	switch k := v.Kind(); {
	case tok[0] == 'n':
		return true // null leaves v as it is: zero
	case tok[0] == '"':
		if k == reflect.String {
			v.SetString(unquote(tok))
			return true
		}
	case tok[0] == 't' || tok[0] == 'f':
		if k == reflect.Bool {
			v.SetBool(tok[0] == 't')
			return true
		}
	case reflect.Int <= k && k <= reflect.Int64:
		n, err := strconv.ParseInt(string(tok), 10, 64)
		if err == nil && !v.OverflowInt(n) {
			v.SetInt(n)
			return true
		}
	case reflect.Uint <= k && k <= reflect.Uintptr:
		n, err := strconv.ParseUint(string(tok), 10, 64)
		if err == nil && !v.OverflowUint(n) {
			v.SetUint(n)
			return true
		}
	case k == reflect.Float32 || k == reflect.Float64:
		n, err := strconv.ParseFloat(string(tok), v.Type().Bits())
		if err == nil && !v.OverflowFloat(n) {
			v.SetFloat(n)
			return true
		}
	}
	return false
}

// emptyArray reports whether data[i:end] is [] with only spaces inside.
func (s *scanner) emptyArray(i, end int) bool {
	for j := i + 1; j < end-1; j++ {
		if !isSpace(s.data[j]) {
			return false
		}
	}
	return true
}

// object scans the object at data[i]. In typed mode t is the struct or
// map it is decoded into: every key once, known to the struct, each value
// checked, every required field present, in that order (Decode).
func (s *scanner) object(i int, m mode, t reflect.Type, v reflect.Value, at *place, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errSyntax
	}
	var k objectKeys
	if m == typed {
		if t.Kind() == reflect.Struct {
			var own bool
			k.fields, own = structFields(t)
			k.isStruct = true
			if !own && v.IsValid() {
				s.fallback, v = true, reflect.Value{}
			}
		} else {
			k.elem = t.Elem()
		}
	}
	if len(k.fields) > 0 {
		k.seenFields, k.present = make([]bool, len(k.fields)), make([]bool, len(k.fields))
	}
	i = s.skipSpace(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		return s.required(k.fields, k.present, k.seenFields, at, i+1)
	}
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return 0, errSyntax
		}
		keyEnd, err := s.str(i)
		if err != nil {
			return 0, err
		}
		rawKey := s.data[i:keyEnd]
		i = s.skipSpace(keyEnd)
		if i >= len(s.data) || s.data[i] != ':' {
			return 0, errSyntax
		}
		i = s.skipSpace(i + 1)
		if m == plain {
			i, err = s.value(i, plain, nil, reflect.Value{}, "", at, depth)
		} else {
			i, err = s.member(i, m, &k, unquote(rawKey), v, at, depth)
		}
		if err != nil {
			return 0, err
		}
		var closed bool
		if i, closed, err = s.after(i, '}'); err != nil {
			return 0, err
		}
		if closed {
			return s.required(k.fields, k.present, k.seenFields, at, i)
		}
	}
}

// objectKeys is what object knows of an object's members outside plain
// mode: a struct's fields or a map's element type, and the keys read so
// far.
type objectKeys struct {
	isStruct   bool    // typed into a struct: keys are its fields
	fields     []field // of the struct
	elem       reflect.Type
	seenFields []bool          // by field index, for a struct
	seenKeys   map[string]bool // for a map, or any object in dups mode
	present    []bool          // by field index: given a value other than null
}

// claim records key, read in the object at at, and returns the index of
// the field it fills (-1 for none) and the type its value decodes to. A
// key given twice is a duplicate before it is unknown; an unknown key
// fails at its first occurrence.
func (k *objectKeys) claim(key string, at *place) (int, reflect.Type, error) {
	if !k.isStruct {
		if k.seenKeys[key] {
			return -1, nil, errorOf(Duplicate, key, "", "%s: key %q appears twice", at, key)
		}
		if k.seenKeys == nil {
			k.seenKeys = map[string]bool{}
		}
		k.seenKeys[key] = true
		return -1, k.elem, nil
	}
	fi := fieldIndex(k.fields, key)
	if fi >= 0 && k.seenFields[fi] {
		return -1, nil, errorOf(Duplicate, key, "", "%s: key %q appears twice", at, key)
	}
	if fi < 0 {
		e := errorOf(Unknown, key, "", "%s: unknown field %q", at, key)
		for _, f := range k.fields {
			e.Known = append(e.Known, f.name)
		}
		return -1, nil, e
	}
	k.seenFields[fi] = true
	return fi, k.fields[fi].typ, nil
}

// member reads the value of the member key at i into v's field (a struct's
// member, when v is valid) and returns the index after it.
func (s *scanner) member(i int, m mode, k *objectKeys, key string, v reflect.Value, at *place, depth int) (int, error) {
	fi, vt, err := k.claim(key, at)
	if err != nil {
		return 0, err
	}
	var fv reflect.Value
	if fi >= 0 && v.IsValid() {
		fv = v.FieldByIndex(k.fields[fi].index)
	}
	start := i
	if i, err = s.value(i, m, vt, fv, key, &place{parent: at, key: key, index: -1}, depth); err != nil {
		return 0, err
	}
	if fi >= 0 {
		k.present[fi] = string(s.data[start:i]) != "null"
	}
	return i, nil
}

// required refuses a required field left out of an object (absent or
// null; absent only for a field that may be null), else returns end.
func (s *scanner) required(fields []field, present, seen []bool, at *place, end int) (int, error) {
	for k, f := range fields {
		switch {
		case f.required && !present[k]:
			return 0, errorOf(Missing, f.name, "", "%s: field %q is required", at, f.name)
		case f.given && !seen[k]:
			return 0, errorOf(Missing, f.name, "", "%s: field %q is required (null is allowed)", at, f.name)
		}
	}
	return end, nil
}

// array scans the array at data[i]; in typed mode each element against
// elem, field naming the array's field.
// v, when valid, is the slice (nil) the elements are appended to.
func (s *scanner) array(i int, m mode, elem reflect.Type, v reflect.Value, field string, at *place, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errSyntax
	}
	i = s.skipSpace(i + 1)
	if i < len(s.data) && s.data[i] == ']' {
		if v.IsValid() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // [] is an empty slice, not nil
		}
		return i + 1, nil
	}
	for k := 0; ; k++ {
		var err error
		if m == plain {
			i, err = s.value(i, plain, nil, reflect.Value{}, "", at, depth)
		} else {
			var ev reflect.Value
			if v.IsValid() && !s.fallback {
				v.Grow(1)
				v.SetLen(k + 1)
				ev = v.Index(k)
			}
			i, err = s.value(i, m, elem, ev, "", &place{parent: at, index: k}, depth)
		}
		if err != nil {
			return 0, err
		}
		var closed bool
		if i, closed, err = s.after(i, ']'); err != nil || closed {
			return i, err
		}
	}
}

// after reads what follows an element of an object or array at data[i]: a
// comma, and then i is the start of the next element, or the close byte,
// and then closed is true and i is just past it; anything else is
// errSyntax.
func (s *scanner) after(i int, close byte) (next int, closed bool, err error) {
	i = s.skipSpace(i)
	switch {
	case i >= len(s.data):
		return 0, false, errSyntax
	case s.data[i] == ',':
		return s.skipSpace(i + 1), false, nil
	case s.data[i] == close:
		return i + 1, true, nil
	}
	return 0, false, errSyntax
}

// str scans the string at data[i] (a '"').
func (s *scanner) str(i int) (int, error) {
	d := s.data
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return 0, errSyntax
		case c == '\\':
			i++
			if i >= len(d) {
				return 0, errSyntax
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) {
					return 0, errSyntax
				}
				for _, h := range d[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, errSyntax
					}
				}
				i += 4
			default:
				return 0, errSyntax
			}
		}
	}
	return 0, errSyntax
}

func (s *scanner) literal(i int, word string) (int, error) {
	if len(s.data)-i < len(word) || string(s.data[i:i+len(word)]) != word {
		return 0, errSyntax
	}
	return i + len(word), nil
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at data[i].
func (s *scanner) number(i int) (int, error) {
	d := s.data
	digits := func(i int) (int, bool) {
		j := i
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i, _ = digits(i)
	default:
		return 0, errSyntax
	}
	var ok bool
	if i < len(d) && d[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return 0, errSyntax
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return 0, errSyntax
		}
	}
	return i, nil
}

// unquote returns the string the JSON string token raw (valid) stands for,
// as encoding/json reads it: escapes resolved, invalid UTF-8 replaced.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	json.Unmarshal(raw, &s) // valid: scanned already
	return s
}

// structCache holds structInfo by struct type: Decode looks the fields up
// once per object of the input (200 items are 200 lookups).
var structCache sync.Map // reflect.Type → structInfo

type structInfo struct {
	fields []field
	own    bool // Decode's pass may store into every field (see field.own)
}

// structFields returns jsonFields(t) and whether Decode's pass may store
// the struct itself: every field its own, every name once (encoding/json
// drops, or picks one of, fields that share a name).
func structFields(t reflect.Type) ([]field, bool) {
	if info, ok := structCache.Load(t); ok {
		return info.(structInfo).fields, info.(structInfo).own
	}
	info := structInfo{fields: jsonFields(t, nil), own: true}
	names := map[string]bool{}
	for _, f := range info.fields {
		info.own = info.own && f.own && !names[f.name]
		names[f.name] = true
	}
	structCache.Store(t, info)
	return info.fields, info.own
}

func fieldIndex(fields []field, name string) int {
	for k := range fields {
		if fields[k].name == name {
			return k
		}
	}
	return -1
}

// Member is one member of a JSON object: its key as encoding/json reads
// it and its value, a slice of the scanned text (not a copy).
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members splits the JSON text raw, an object, into its members in the
// order of the text, in one pass; ok is false when raw is not valid JSON
// or not an object (surrounding whitespace is allowed, as by
// json.Unmarshal). Keys may repeat: json.Unmarshal into a map keeps the
// last. docs/performance.md.
func Members(raw []byte) (members []Member, ok bool) {
	ok = each(raw, '{', '}', func(s *scanner, i int) (int, bool) {
		if i >= len(raw) || raw[i] != '"' {
			return 0, false
		}
		keyEnd, err := s.str(i)
		if err != nil {
			return 0, false
		}
		key := unquote(raw[i:keyEnd])
		if i = s.skipSpace(keyEnd); i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		start := s.skipSpace(i + 1)
		if i, err = s.value(start, plain, nil, reflect.Value{}, "", nil, 1); err != nil {
			return 0, false
		}
		members = append(members, Member{Key: key, Value: raw[start:i:i]})
		return i, true
	})
	if !ok {
		return nil, false
	}
	return members, true
}

// Elements splits the JSON text raw, an array, into its elements, each a
// slice of raw (not a copy), in one pass; ok is false when raw is not
// valid JSON or not an array (surrounding whitespace is allowed).
func Elements(raw []byte) (elems []json.RawMessage, ok bool) {
	ok = each(raw, '[', ']', func(s *scanner, start int) (int, bool) {
		i, err := s.value(start, plain, nil, reflect.Value{}, "", nil, 1)
		if err != nil {
			return 0, false
		}
		elems = append(elems, raw[start:i:i])
		return i, true
	})
	if !ok {
		return nil, false
	}
	return elems, true
}

// each walks raw, one object or array (open and close are its brackets)
// with white space around it, calling item at the offset of each member or
// element; item returns the offset just after it, or false. It reports
// whether raw is such a container and valid JSON.
func each(raw []byte, open, close byte, item func(s *scanner, i int) (int, bool)) bool {
	s := scanner{data: raw}
	i := s.skipSpace(0)
	if i >= len(raw) || raw[i] != open {
		return false
	}
	i = s.skipSpace(i + 1)
	if i < len(raw) && raw[i] == close {
		return s.skipSpace(i+1) == len(raw)
	}
	for {
		var ok bool
		if i, ok = item(&s, i); !ok {
			return false
		}
		var closed bool
		var err error
		if i, closed, err = s.after(i, close); err != nil {
			return false
		}
		if closed {
			return s.skipSpace(i) == len(raw)
		}
	}
}

// Compact reports whether raw is valid JSON without whitespace outside its
// strings: what json.Compact (and encoding/json writing a json.RawMessage
// without HTML escaping) would return unchanged, so that it can be sent as
// it is. One pass, no copy.
func Compact(raw []byte) bool {
	s := scanner{data: raw}
	return s.text(plain, nil, reflect.Value{}, "") == nil && !s.spaced
}

// emptyObjects returns the scanned text raw with every [] recorded in
// edits written as {}: what Decode hands to encoding/json. Without edits it
// is raw itself.
func (s *scanner) emptyObjects(raw []byte) []byte {
	if len(s.edits) == 0 {
		return raw
	}
	out := make([]byte, 0, len(raw))
	last := 0
	for _, i := range s.edits {
		end := i + 1
		for raw[end] != ']' {
			end++
		}
		out = append(append(out, raw[last:i]...), "{}"...)
		last = end + 1
	}
	return append(out, raw[last:]...)
}
