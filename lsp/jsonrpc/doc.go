// Package jsonrpc is agentd's JSON-RPC 2.0 transport with the LSP base
// protocol's Content-Length framing: the one framing reader (Reader:
// headers, resynchronisation after broken framing, the line limit) and
// writer, and Conn on top of them (ids, routing in arrival order,
// $/cancelRequest, the bounds of the outgoing queue, the size limit of one
// message). The LSP server (package lsp), the shared daemon and its
// clients (package lsp/daemon), agentd's tests and the benchmark all talk
// through it.
//
// It replaces go.lsp.dev/jsonrpc2 v0.10.0, whose faults agentd must not
// inherit (docs/architecture.md, "Library pins"): ids of any size are
// echoed verbatim, calls are answered concurrently, a malformed message
// never ends the connection, numeric $/cancelRequest ids work, and an error
// wrapped around an *Error keeps its outer text.
//
// Messages are split with jsonin's one-pass scanner and replies built
// around results encoded once (docs/performance.md). It imports the
// standard library and jsonin only: never go.lsp.dev, nor any other package
// of agentd (lsp and lsp/daemon import it, never the other way round).
package jsonrpc
