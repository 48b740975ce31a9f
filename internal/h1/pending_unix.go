//go:build unix

package h1

import (
	"errors"
	"syscall"
)

// pending reports whether the socket of rc has bytes to read or has been
// closed by its peer, without blocking: a peek (MSG_PEEK) that does not
// wait (MSG_DONTWAIT). An error other than "would block" counts as
// pending too: the connection is not fit for a new request.
func pending(rc syscall.RawConn) bool {
	var perr error
	var b [1]byte
	err := rc.Read(func(fd uintptr) bool {
		_, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait for readiness
	})
	switch {
	case err != nil:
		return true
	case errors.Is(perr, syscall.EAGAIN), errors.Is(perr, syscall.EWOULDBLOCK), errors.Is(perr, syscall.EINTR):
		return false
	}
	return true // a byte waiting, or the end of file
}
