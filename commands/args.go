package commands

import (
	"bytes"
	"encoding/json"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/jsonin"
)

// Common holds the optional fields every command accepts (docs/protocol.md §3).
type Common = protocol.Common

// withCommon is implemented by every argument struct through embedding Common.
type withCommon interface{ CommonArgs() *Common }

// UnwrapArguments turns the raw `arguments` of workspace/executeCommand into
// the single ARGS object: omitted, null, [], [{}] and [[]] all mean {}
// (docs/protocol.md §3). Anything else but a one-element array holding an object
// is an args.invalid error.
func UnwrapArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	list, ok := jsonin.Elements(raw) // one pass; the element is a slice of raw
	if !ok {
		return nil, argsErrorf("arguments must be an array holding one object, got %s", jsonin.Kind(raw))
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
	case bytes.Equal(one, []byte("null")), jsonin.IsEmptyArray(one):
		return json.RawMessage("{}"), nil
	case len(one) > 0 && one[0] == '{':
		return one, nil
	}
	return nil, argsErrorf("arguments[0] must be an object, got %s", jsonin.Kind(one))
}
