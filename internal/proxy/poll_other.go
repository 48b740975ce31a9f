//go:build !linux

package proxy

// canPoll: polling reads are implemented only on Linux (poll_linux.go).
const canPoll = false

func readable(uintptr) bool { return true }

func yieldCPU() {}
