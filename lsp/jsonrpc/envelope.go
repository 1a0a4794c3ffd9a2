package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/jsonin"
)

var rpcNull = json.RawMessage("null")

// rpcMarshal encodes v without HTML escaping, so ids and strings go out as written.
func rpcMarshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rpcEncode is rpcMarshal for params and results: a json.RawMessage that
// is compact JSON already goes out as it is (encoding/json would only have
// checked and copied it, docs/performance.md); anything else is encoded
// once.
func rpcEncode(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok && jsonin.Compact(raw) {
		return raw, nil
	}
	return rpcMarshal(v)
}

// rpcEnvelope builds an outgoing message around parts that are JSON
// already (id, params, result: valid and compact), with the members in the
// order {"jsonrpc","id","method","params","result","error"}; an empty part
// is left out, as is a nil e. These are the bytes encoding/json writes for
// the same message without HTML escaping, built without passing the parts
// through it again. It fails only when e's Data cannot be encoded.
func rpcEnvelope(id json.RawMessage, method string, params, result json.RawMessage, e *Error) ([]byte, error) {
	var errJSON json.RawMessage
	if e != nil {
		var err error
		if errJSON, err = rpcMarshal(e); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 64+len(id)+len(method)+len(params)+len(result)+len(errJSON))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if len(id) > 0 {
		b = append(append(b, `,"id":`...), id...)
	}
	if method != "" {
		b = append(b, `,"method":`...)
		if plainString(method) {
			b = append(append(append(b, '"'), method...), '"')
		} else {
			m, _ := rpcMarshal(method) // a string always encodes
			b = append(b, m...)
		}
	}
	if len(params) > 0 {
		b = append(append(b, `,"params":`...), params...)
	}
	if len(result) > 0 {
		b = append(append(b, `,"result":`...), result...)
	}
	if errJSON != nil {
		b = append(append(b, `,"error":`...), errJSON...)
	}
	return append(b, '}'), nil
}

// plainString reports whether s is printable ASCII without '"' or '\\':
// a JSON string of it is s in quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func rpcRequestBody(id json.RawMessage, method string, params any) ([]byte, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = rpcEncode(params); err != nil {
			return nil, fmt.Errorf("jsonrpc: encoding params of %s: %w", method, err)
		}
	}
	return rpcEnvelope(id, method, raw, nil, nil)
}

// rpcReplyBody encodes a response; id nil is sent as null, result nil as
// null. id and result are valid compact JSON: an id as the request wrote
// it (rpcDecode), a result as rpcEncode wrote it.
func rpcReplyBody(id, result json.RawMessage, e *Error) []byte {
	if id == nil {
		id = rpcNull
	}
	if e == nil && result == nil {
		result = rpcNull
	}
	body, err := rpcEnvelope(id, "", nil, result, e)
	if err != nil { // Data cannot be encoded: send the error without it
		e = &Error{Code: e.Code, Message: e.Message + " (error data not encodable: " + err.Error() + ")"}
		body, err = rpcEnvelope(id, "", nil, result, e)
	}
	if err != nil { // not expected: an Error without Data always encodes
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error: cannot encode a reply"}}`)
	}
	return body
}

// rpcIncoming is a decoded request, notification or response.
type rpcIncoming struct {
	req        Request
	isResponse bool
	result     json.RawMessage
	err        *Error
}

// rpcDecode checks a body against JSON-RPC 2.0. On failure it returns the
// error to answer and the id to answer it with (nil when the id is unusable).
//
// The body is scanned once (jsonin.Members); the members keep pointing into
// it, so Params is a slice of body, not a copy. Of a key given twice the
// last counts, as json.Unmarshal into a map would have it.
func rpcDecode(body []byte) (m *rpcIncoming, replyID json.RawMessage, e *Error) {
	members, ok := jsonin.Members(body)
	if !ok {
		var fields map[string]json.RawMessage
		err := json.Unmarshal(body, &fields)
		trimmed := bytes.TrimSpace(body)
		switch {
		case !json.Valid(trimmed):
			return nil, nil, NewError(CodeParseError, "parse error: %v", err)
		case trimmed[0] == '[':
			return nil, nil, NewError(CodeInvalidRequest, "invalid request: batches are not supported")
		default:
			return nil, nil, NewError(CodeInvalidRequest, "invalid request: message is not a JSON object")
		}
	}
	fields := make(map[string]json.RawMessage, len(members))
	for _, mb := range members {
		fields[mb.Key] = mb.Value
	}
	id, hasID := fields["id"]
	id = bytes.TrimSpace(id)
	if hasID && len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
		replyID = id
	}
	var version string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if rawMethod, ok := fields["method"]; ok {
		var method string
		if rawMethod = bytes.TrimSpace(rawMethod); len(rawMethod) == 0 || rawMethod[0] != '"' || json.Unmarshal(rawMethod, &method) != nil {
			return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if hasID && replyID == nil {
			return nil, nil, NewError(CodeInvalidRequest, `invalid request: "id" must be a number or a string`)
		}
		return &rpcIncoming{req: Request{ID: replyID, Method: method, Params: fields["params"]}}, nil, nil
	}
	result, hasResult := fields["result"]
	rawErr, hasErr := fields["error"]
	if !hasResult && !hasErr {
		return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	m = &rpcIncoming{isResponse: true, req: Request{ID: replyID}, result: result}
	if hasErr && !bytes.Equal(bytes.TrimSpace(rawErr), rpcNull) {
		var we struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		m.err = &Error{Code: CodeInternalError, Message: "malformed error response: " + string(rawErr)}
		if json.Unmarshal(rawErr, &we) == nil {
			m.err = &Error{Code: we.Code, Message: we.Message}
			if we.Data != nil {
				m.err.Data = we.Data
			}
		}
	}
	return m, nil, nil
}
