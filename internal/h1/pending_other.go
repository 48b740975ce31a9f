//go:build !unix

package h1

import "syscall"

// pending cannot peek at a socket on this platform: an idle connection is
// taken as quiet (as before the check existed).
func pending(syscall.RawConn) bool { return false }
