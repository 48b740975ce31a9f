package proxy

import (
	"syscall"
	"unsafe"
)

// canPoll: readable is implemented here.
const canPoll = true

// readable reports whether a read on the socket fd would not block: it
// peeks one byte without waiting. Data, end of stream and errors all
// count as readable; only EAGAIN does not.
func readable(fd uintptr) bool {
	var b [1]byte
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return errno != syscall.EAGAIN && errno != syscall.EWOULDBLOCK
}
