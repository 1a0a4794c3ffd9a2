package jsonrpc

import (
	"syscall"
	"unsafe"
)

// unread is how many of the bytes written to the transport the peer has
// not read yet, as the kernel counts them, when the transport has a
// SyscallConn method (of its output: an os.File, a net.UnixConn): a
// socket's send queue (TIOCOUTQ), else a pipe's content (TIOCINQ, that is
// FIONREAD). A write to a socket or a pipe ends only once the peer has
// read a good part of its buffer; this shows the peer reading meanwhile.
// known is false when the transport does not say.
func (c *Conn) unread() (n int, known bool) {
	sc, ok := c.rwc.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	raw.Control(func(fd uintptr) {
		for _, req := range []uintptr{syscall.TIOCOUTQ, syscall.TIOCINQ} {
			var q int32
			if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(&q))); errno == 0 {
				n, known = int(q), true
				return
			}
		}
	})
	return n, known
}
