package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// fuzzMaxBytes is the message limit in FuzzReadMessage, small so that the
// oversized path is reached.
const fuzzMaxBytes = 256

// FuzzReadMessage feeds arbitrary bytes to a Conn whose Router echoes every
// call. Invariants: no panic; Run returns; every call in the well-framed prefix
// of the input (canonical "Content-Length: N\r\n\r\n" headers) that is valid
// JSON-RPC with a number or string id gets a response, exactly one when its id
// text occurs nowhere else in the input; everything written is well framed.
func FuzzReadMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &rpcStream{Reader: bytes.NewReader(data)}
		route := func(*jsonrpc.Request) (jsonrpc.Handler, bool) { return echo, false }
		c := jsonrpc.NewConn(s, route, jsonrpc.Options{MaxMessageBytes: fuzzMaxBytes})
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()
		select {
		case <-done:
		case <-time.After(rpcWait):
			t.Fatalf("Run did not return within %v", rpcWait)
		}

		s.mu.Lock()
		out := bytes.Clone(s.out.Bytes())
		s.mu.Unlock()
		responses := map[string]int{}
		r := bufio.NewReader(bytes.NewReader(out))
		for {
			body, err := readFrame(r)
			if err != nil {
				if len(out) > 0 && r.Buffered() > 0 {
					t.Fatalf("output is not well framed: %v\n%q", err, out)
				}
				break
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("wrote a body that is not a JSON object: %q", body)
			}
			if _, ok := m["method"]; !ok {
				responses[string(m["id"])]++
			}
		}
		for _, id := range fuzzCallIDs(data) {
			got := responses[id]
			unique := bytes.Count(data, []byte(id)) == 1
			if got == 0 || unique && got != 1 {
				t.Errorf("call with id %s: got %d responses, want 1\ninput %q\noutput %q", id, got, data, out)
			}
		}
	})
}

// fuzzCallIDs returns the ids of the valid calls in the canonically framed
// prefix of data, written independently of the Conn's decoder.
func fuzzCallIDs(data []byte) []string {
	var ids []string
	for {
		rest, ok := bytes.CutPrefix(data, []byte("Content-Length: "))
		if !ok {
			return ids
		}
		end := bytes.Index(rest, []byte("\r\n\r\n"))
		if end < 0 {
			return ids
		}
		n, err := strconv.Atoi(string(rest[:end]))
		if err != nil || n < 0 || strconv.Itoa(n) != string(rest[:end]) || n > len(rest)-end-4 {
			return ids
		}
		body := rest[end+4 : end+4+n]
		data = rest[end+4+n:]
		if n > fuzzMaxBytes {
			continue
		}
		var m map[string]json.RawMessage
		var version, method string
		if json.Unmarshal(body, &m) != nil ||
			json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" ||
			len(m["method"]) == 0 || m["method"][0] != '"' || json.Unmarshal(m["method"], &method) != nil {
			continue
		}
		if id := m["id"]; len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
			ids = append(ids, string(id))
		}
	}
}
