//go:build !linux

package jsonrpc

// unread is how many of the bytes written to the transport the peer has
// not read yet. Only Linux's kernel queues are asked (unread_linux.go);
// elsewhere it is never known, and a stalled peer is told by time alone.
func (c *Conn) unread() (n int, known bool) { return 0, false }
