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

// yieldCPU gives the thread's CPU to another runnable thread, if any: a
// polling read must not keep the origin or the client (often on the same
// machine) from running.
func yieldCPU() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
