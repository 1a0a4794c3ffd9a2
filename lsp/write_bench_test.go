//go:build unix

package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// pipeRWC is one end of a connection made of two io.Pipes.
type pipeRWC struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeRWC) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

// benchTodoWrites are two TodoList writes of n items, as tests/bench sends
// them (the first item's status differs, so that every call changes the
// list), and the executeCommand params of each.
func benchTodoWrites(n int) [2]json.RawMessage {
	var out [2]json.RawMessage
	for k, first := range []string{"in_progress", "done"} {
		items := make([]map[string]string, n)
		for i := range items {
			st := "pending"
			if i == 0 {
				st = first
			}
			items[i] = map[string]string{"title": fmt.Sprintf("Step %d: update the parser and its tests for the new config format", i+1), "status": st}
		}
		raw, err := json.Marshal(map[string]any{"command": "agentd.callTool",
			"arguments": []any{map[string]any{"session": "bench", "name": "TodoList", "input": map[string]any{"todos": items}}}})
		if err != nil {
			panic(err)
		}
		out[k] = raw
	}
	return out
}

// cpuTime is this process's user+system CPU time.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floorCPU is the CPU of the least any JSON-RPC server does with the same
// exchange: encoding/json decodes the request into its final typed
// structure once and encodes the reply once (docs/performance.md).
func floorCPU(b *testing.B, req, reply []byte, rounds int) time.Duration {
	type item struct {
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	type request struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			Command   string `json:"command"`
			Arguments []struct {
				Session string `json:"session"`
				Name    string `json:"name"`
				Input   struct {
					Todos []item `json:"todos"`
				} `json:"input"`
			} `json:"arguments"`
		} `json:"params"`
	}
	var res map[string]any
	if err := json.Unmarshal(reply, &res); err != nil {
		b.Fatal(err)
	}
	start := cpuTime(b)
	for range rounds {
		var r request
		if err := json.Unmarshal(req, &r); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
	return (cpuTime(b) - start) / time.Duration(rounds)
}

// benchConn starts an lsp.Server of a fresh service on io.Pipes,
// initialized with one folder, and returns the client's send (one message
// body, framed) and reply (reads messages up to the next response and
// returns its body). The client is kept to framing alone (no JSON), so
// that the CPU measured is the server's. The server stops at the end of b.
func benchConn(b *testing.B) (send func(body []byte), reply func() []byte) {
	dir := b.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.MkdirAll(root, 0o700); err != nil {
		b.Fatal(err)
	}
	svc := service.New(workspace.Options{StateDir: filepath.Join(dir, "state")}, service.Daemon)
	srv := lsp.NewServer(svc, "bench", nil)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeConn(ctx, pipeRWC{sr, sw, []io.Closer{sr, sw}}, lsp.ConnOptions{})
	}()
	b.Cleanup(func() {
		cancel()
		cw.Close()
		cr.Close()
		<-served
		srv.Close()
		svc.Close()
	})
	in := jsonrpc.NewReader(cr, jsonrpc.ReaderOptions{})
	send = func(body []byte) {
		if _, err := fmt.Fprintf(cw, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			b.Fatal(err)
		}
	}
	reply = func() []byte {
		for {
			n, err := in.ReadHeader()
			if err != nil {
				b.Fatal(err)
			}
			body, err := in.ReadBody(n)
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":`)) {
				return body
			}
		}
	}
	folders, _ := json.Marshal(map[string]any{"workspaceFolders": []map[string]string{{"uri": wsfolder.URIFromPath(root), "name": "work"}}})
	send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}`, folders))
	reply()
	send([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	return send, reply
}

// BenchmarkTodoListWrite runs TodoList writes of 8, 100 and 200 items
// through a whole LSP connection over io.Pipe (framing, dispatch, the
// command, the store's commit with fsync, the todoChanged notification to
// this connection, the reply) and reports the server's and client's CPU per
// write (cpu-µs/op) and its ratio to floorCPU of the same request and reply
// bytes measured in the same run (cpu/floor). docs/performance.md.
func BenchmarkTodoListWrite(b *testing.B) {
	for _, n := range []int{8, 100, 200} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			send, reply := benchConn(b)
			var reqs [2][]byte
			for k, params := range benchTodoWrites(n) {
				reqs[k] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":%s}`, params)
			}
			send(reqs[1])
			last := reply()
			var res struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(last, &res); err != nil || bytes.Contains(res.Result, []byte(`"isError":true`)) {
				b.Fatalf("write refused: %s (%v)", last, err)
			}
			floor := floorCPU(b, reqs[0], res.Result, 200)
			b.ResetTimer()
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				send(reqs[i%2])
				reply()
			}
			cpu := cpuTime(b) - start
			b.StopTimer()
			per := cpu / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds()), "cpu-µs/op")
			b.ReportMetric(float64(per)/float64(floor), "cpu/floor")
		})
	}
}

// BenchmarkReads runs the reads of tests/bench's core figures through a
// whole LSP connection over io.Pipe: a TodoList query of a used list of 8
// items, agentd.state of that session, and GetGoal in a session with a goal
// and an open turn. It reports the server's and client's CPU per read
// (cpu-µs/op); none of them commits (docs/performance.md "Reads").
func BenchmarkReads(b *testing.B) {
	exec := func(command string, args any) []byte {
		params, err := json.Marshal(map[string]any{"command": command, "arguments": []any{args}})
		if err != nil {
			b.Fatal(err)
		}
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":%s}`, params)
	}
	send, reply := benchConn(b)
	setup := [][]byte{
		fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":%s}`, benchTodoWrites(8)[0]),
		exec("agentd.goal.create", map[string]any{"session": "goal", "objective": "Ship the new config format"}),
		exec("agentd.turn.begin", map[string]any{"session": "goal", "turnId": "t1", "origin": "user"}),
	}
	for _, req := range setup {
		send(req)
		if r := reply(); bytes.Contains(r, []byte(`"error":`)) || bytes.Contains(r, []byte(`"isError":true`)) {
			b.Fatalf("setup %s: %s", req, r)
		}
	}
	for _, r := range []struct {
		name string
		req  []byte
	}{
		{"TodoList", exec("agentd.callTool", map[string]any{"session": "bench", "name": "TodoList", "input": map[string]any{}})},
		{"state", exec("agentd.state", map[string]any{"session": "bench"})},
		{"GetGoal", exec("agentd.callTool", map[string]any{"session": "goal", "name": "GetGoal", "input": map[string]any{}})},
	} {
		b.Run(r.name, func(b *testing.B) {
			send(r.req)
			if got := reply(); bytes.Contains(got, []byte(`"error":`)) || bytes.Contains(got, []byte(`"isError":true`)) {
				b.Fatalf("%s: %s", r.req, got)
			}
			b.ResetTimer()
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				send(r.req)
				reply()
			}
			cpu := cpuTime(b) - start
			b.StopTimer()
			b.ReportMetric(float64((cpu / time.Duration(b.N)).Microseconds()), "cpu-µs/op")
		})
	}
}

// BenchmarkSteps runs the step pair of tests/bench's core figures through a
// whole LSP connection over io.Pipe: agentd.step.begin and agentd.step.end
// (100 output tokens) of an open turn of a session with a goal, one after
// the other, each committed with fsync; step.end also appends a history
// event and sends agentd/goalChanged. It reports the server's and client's
// CPU per pair (cpu-µs/op; docs/performance.md "step.end").
func BenchmarkSteps(b *testing.B) {
	exec := func(command string, args any) []byte {
		params, err := json.Marshal(map[string]any{"command": command, "arguments": []any{args}})
		if err != nil {
			b.Fatal(err)
		}
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":%s}`, params)
	}
	send, reply := benchConn(b)
	for _, req := range [][]byte{
		exec("agentd.goal.create", map[string]any{"session": "goal", "objective": "Ship the new config format"}),
		exec("agentd.turn.begin", map[string]any{"session": "goal", "turnId": "t1", "origin": "user"}),
	} {
		send(req)
		if r := reply(); bytes.Contains(r, []byte(`"error":`)) {
			b.Fatalf("setup %s: %s", req, r)
		}
	}
	steps := [][]byte{
		exec("agentd.step.begin", map[string]any{"session": "goal", "turnId": "t1"}),
		exec("agentd.step.end", map[string]any{"session": "goal", "turnId": "t1", "outputTokens": 100, "finishReason": "tool_calls"}),
	}
	b.ResetTimer()
	start := cpuTime(b)
	for i := 0; i < b.N; i++ {
		for _, req := range steps {
			send(req)
			if r := reply(); bytes.Contains(r, []byte(`"error":`)) {
				b.Fatalf("%s: %s", req, r)
			}
		}
	}
	cpu := cpuTime(b) - start
	b.StopTimer()
	b.ReportMetric(float64((cpu / time.Duration(b.N)).Microseconds()), "cpu-µs/op")
}
