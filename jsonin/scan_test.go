package jsonin

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanSeeds are inputs for the scanner's fuzzers: the shapes agentd
// receives, and the corners of the grammar.
var scanSeeds = []string{
	`{}`, `[]`, ` { } `, `[ ]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `01`, `1.`, `-`, `1e`, `"a"`, `"\u00e9\n"`,
	`"\x"`, "\"\x01\"", `"\ud800"`, "\"\xff\"", `{"a":1,"a":2}`, `{"a" : [1, {"b": null}] }`, `[1,]`, `{"a":1,}`, `{"a"}`,
	`{"todos":[{"title":"a","status":"pending"},{"title":"b","status":"done"}]}`, `{"todos":[[], null]}`, `{"todos":null}`,
	`{"todos":[{"title":"a","title":"b"}]}`, `{"todos":[{"Title":"a"}]}`, `{"ti\u0074le":1}`, `{"name":"x","count":1.5}`,
	`{"name":"x","tags":[1]}`, `{"name":"x"} x`, `{"m":{"k":[],"k":{}}}`, `{"any":{"a":{"b":1,"b":2}}}`, `{"raw":{"a":1,"a":1}}`,
	`{"ptr":null,"val":null}`, `{"i":-128,"u":65536,"f":1e39,"b":true,"s":"\u00e9","q":"7","t":"x","p":null,"pr":null}`,
	`{"i":1.0,"u":-1,"f":3.4e38,"b":null,"s":null,"arr":[1,2,3],"bs":"AQI=","l":[null,{"n":1},[]]}`, `{"n":"x","name":"y"}`, `{"val":[]}`, `{"grid":[[{"n":1}],[[]],null]}`, `{"lim":"x"}`, `{"lim":2}`, `{"lim":null}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// FuzzScan: the scanner accepts exactly what encoding/json accepts, and
// Members, Elements and Compact answer what json.Unmarshal and json.Compact
// make of the same text.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := scanner{data: data}
		if got, want := s.text(plain, nil, reflect.Value{}, "") == nil, json.Valid(data); got != want {
			t.Fatalf("scan of %q: valid %v, json.Valid %v", data, got, want)
		}
		var obj map[string]json.RawMessage
		objErr := json.Unmarshal(data, &obj)
		members, ok := Members(data)
		if want := objErr == nil && obj != nil; ok != want {
			t.Fatalf("Members(%q): ok %v, json.Unmarshal into a map: %v, %v", data, ok, obj, objErr)
		}
		if ok {
			got := map[string]json.RawMessage{}
			for _, m := range members {
				got[m.Key] = m.Value
			}
			if diff := cmp.Diff(obj, got); diff != "" {
				t.Fatalf("Members(%q) (-json.Unmarshal +Members):\n%s", data, diff)
			}
		}
		var list []json.RawMessage
		listErr := json.Unmarshal(data, &list)
		elems, ok := Elements(data)
		if want := listErr == nil && list != nil; ok != want {
			t.Fatalf("Elements(%q): ok %v, json.Unmarshal into a slice: %v, %v", data, ok, list, listErr)
		}
		if ok && !slicesEqual(list, elems) {
			t.Fatalf("Elements(%q) = %q, json.Unmarshal %q", data, elems, list)
		}
		var compacted bytes.Buffer
		want := json.Compact(&compacted, data) == nil && bytes.Equal(compacted.Bytes(), data)
		if got := Compact(data); got != want {
			t.Fatalf("Compact(%q) = %v, want %v", data, got, want)
		}
	})
}

// limit has its own UnmarshalJSON, as goal.LimitUpdate does.
type limit struct{ set bool }

func (l *limit) UnmarshalJSON(b []byte) error {
	if string(b) == `"x"` {
		return errors.New("limit must be a number")
	}
	l.set = true
	return nil
}

type fuzzItem struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

type fuzzInner struct {
	N int `json:"n" jsonin:"required"`
}

// fuzzShapes are the Go types FuzzDecodeMatchesReference decodes into:
// every kind the rules of Decode treat apart.
var fuzzShapes = []func() any{
	func() any {
		return &struct {
			Todos *[]fuzzItem `json:"todos"`
		}{}
	},
	func() any { return &sample{} },
	func() any {
		return &struct {
			fuzzInner
			M    map[string]fuzzInner `json:"m"`
			Any  any                  `json:"any"`
			Raw  json.RawMessage      `json:"raw"`
			Ptr  *fuzzInner           `json:"ptr"`
			Val  fuzzInner            `json:"val"`
			Grid [][]fuzzInner        `json:"grid"`
			Lim  limit                `json:"lim"`
			Skip string               `json:"-"`
		}{}
	},
	func() any { return &map[string]any{} },
	func() any {
		return &struct {
			I   int8             `json:"i"`
			U   uint16           `json:"u"`
			F   float32          `json:"f"`
			B   bool             `json:"b"`
			S   named            `json:"s"`
			Q   int              `json:"q,string"`
			T   text             `json:"t"`
			P   *string          `json:"p"`
			PR  *json.RawMessage `json:"pr"`
			Arr [2]int           `json:"arr"`
			Bs  []byte           `json:"bs"`
			L   []*fuzzInner     `json:"l"`
		}{}
	},
	func() any {
		return &struct {
			*fuzzInner
			Name string `json:"name"`
		}{}
	},
	func() any {
		return &struct {
			fuzzInner
			N string `json:"n"` // shadows fuzzInner.N
		}{}
	},
}

type named string

// text is a encoding.TextUnmarshaler: encoding/json decodes strings into it
// with UnmarshalText.
type text struct{ s string }

func (t *text) UnmarshalText(b []byte) error {
	t.s = "text:" + string(b)
	return nil
}

// FuzzDecodeMatchesReference: Decode answers every input as the
// implementation before its one-pass scanner did (reference_test.go): the
// same error, field by field and word for word, or the same value.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range scanSeeds {
		for k := range fuzzShapes {
			f.Add(uint8(k), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, shape uint8, data []byte) {
		make := fuzzShapes[int(shape)%len(fuzzShapes)]
		got, want := make(), make()
		gotErr, wantErr := Decode(data, got, "in"), refDecode(data, want, "in")
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Decode(%q) = %v, before %v", data, gotErr, wantErr)
		}
		if gotErr != nil {
			var g, w *Error
			if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) {
				t.Fatalf("Decode(%q): errors %T %v and %T %v", data, gotErr, gotErr, wantErr, wantErr)
			}
			if diff := cmp.Diff(w, g, cmp.AllowUnexported(Error{})); diff != "" {
				t.Fatalf("Decode(%q) error (-before +now):\n%s", data, diff)
			}
			return
		}
		if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Fatalf("Decode(%q) value (-before +now):\n%s", data, diff)
		}
	})
}

func slicesEqual(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestScanStoresWhatItCan: the types of tool inputs and command arguments
// are stored by the scan itself; a type with its own decoder is left to
// encoding/json.
func TestScanStoresWhatItCan(t *testing.T) {
	tests := []struct {
		raw      string
		dst      any
		fallback bool
	}{
		{`{"todos":[{"title":"a\u00e9","status":"pending"},[]]}`, &struct {
			Todos *[]fuzzItem `json:"todos"`
		}{}, false},
		{`{"name":"n","input":{"a":[1]},"turnId":null}`, &struct {
			Name   string          `json:"name"`
			Input  json.RawMessage `json:"input"`
			TurnID string          `json:"turnId"`
		}{}, false},
		{`{"n":1,"lim":2}`, fuzzShapes[2](), true},
		{`{"name":"a","count":"x"}`, &sample{}, true},
	}
	for _, tt := range tests {
		v := reflect.ValueOf(tt.dst).Elem()
		s := scanner{data: []byte(tt.raw)}
		if err := s.text(typed, v.Type(), v, "in"); err != nil || s.fallback != tt.fallback {
			t.Errorf("scan of %s into %T: %v, fallback %v, want %v", tt.raw, tt.dst, err, s.fallback, tt.fallback)
		}
	}
}
