package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// refWire and the two ref functions are how messages were encoded before
// rpcEnvelope: the whole message through encoding/json, every part
// compacted again. FuzzEnvelopeMatchesEncodingJSON holds the envelope to
// the same bytes.
type refWire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func refRequestBody(id json.RawMessage, method string, params any) ([]byte, error) {
	msg := refWire{JSONRPC: "2.0", ID: id, Method: method}
	if params != nil {
		raw, err := rpcMarshal(params)
		if err != nil {
			return nil, err
		}
		msg.Params = raw
	}
	return rpcMarshal(msg)
}

func refReplyBody(id json.RawMessage, result any, e *Error) []byte {
	msg := refWire{JSONRPC: "2.0", ID: id, Error: e}
	if id == nil {
		msg.ID = rpcNull
	}
	if result != nil {
		raw, err := rpcMarshal(result)
		if err != nil {
			panic(err)
		}
		msg.Result = raw
	}
	if e == nil && result == nil {
		msg.Result = rpcNull
	}
	body, err := rpcMarshal(msg)
	if err != nil && e != nil {
		msg.Error = &Error{Code: e.Code, Message: e.Message + " (error data not encodable: " + err.Error() + ")"}
		body, err = rpcMarshal(msg)
	}
	if err != nil {
		panic(err)
	}
	return body
}

// FuzzEnvelopeMatchesEncodingJSON: requests, notifications and replies
// built around already-encoded parts are the bytes encoding/json wrote for
// the whole message: ids as received, methods with any characters, params
// and results of any JSON (spaced, escaped, with <>&, U+2028) and errors
// with and without data.
func FuzzEnvelopeMatchesEncodingJSON(f *testing.F) {
	f.Add([]byte(`7`), "workspace/executeCommand", []byte(`{"command":"x","arguments":[{}]}`), []byte(`{"ok":true}`), uint8(0), "")
	f.Add([]byte(`"a<b>"`), "agentd/todoChanged", []byte(` { "a" : [ 1 , 2 ] } `), []byte("\"\u2028&\""), uint8(1), "bad <input> & \u2028")
	f.Add([]byte(`1e20`), "m\"\\\x01\u00e9", []byte(`null`), []byte(`[]`), uint8(2), "with data")
	f.Add([]byte(``), "", []byte(`{`), []byte(`"\u003c"`), uint8(3), "")
	f.Fuzz(func(t *testing.T, id []byte, method string, params, result []byte, errKind uint8, message string) {
		// An id is a number or a string token as received (rpcDecode), or
		// one of ours (Call).
		var idRaw json.RawMessage
		if id = bytes.TrimSpace(id); json.Valid(id) && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
			idRaw = id
		}
		got, gotErr := rpcRequestBody(idRaw, method, json.RawMessage(params))
		want, wantErr := refRequestBody(idRaw, method, json.RawMessage(params))
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("request %q %q %q:\n got %q, %v\nwant %q, %v", id, method, params, got, gotErr, want, wantErr)
		}
		if method == "" {
			got, gotErr := rpcRequestBody(idRaw, method, map[string]any{"m": method, "p": json.RawMessage(params)})
			want, wantErr := refRequestBody(idRaw, method, map[string]any{"m": method, "p": json.RawMessage(params)})
			if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("request with struct params %q:\n got %q, %v\nwant %q, %v", params, got, gotErr, want, wantErr)
			}
		}

		var e *Error
		switch errKind % 4 {
		case 1:
			e = &Error{Code: CodeInvalidParams, Message: message}
		case 2:
			e = &Error{Code: CodeRequestFailed, Message: message, Data: map[string]any{"code": message, "raw": json.RawMessage(`{"a": 1}`)}}
		case 3:
			e = &Error{Code: CodeInternalError, Message: message, Data: math.NaN()} // not encodable
		}
		var res any
		if json.Valid(result) {
			res = json.RawMessage(result)
		}
		var encoded json.RawMessage
		if res != nil {
			var err error
			if encoded, err = rpcEncode(res); err != nil {
				t.Fatalf("rpcEncode(%q): %v", result, err)
			}
		}
		if got, want := rpcReplyBody(idRaw, encoded, e), refReplyBody(idRaw, res, e); !bytes.Equal(got, want) {
			t.Fatalf("reply %q %q %+v:\n got %q\nwant %q", id, result, e, got, want)
		}
	})
}
