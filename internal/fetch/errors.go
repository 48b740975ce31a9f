package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
)

// Kind classifies a failed fetch, so that the crawler can back off from a
// host and retire one that keeps failing.
type Kind uint8

const (
	// KindOther is any failure not classified below (a malformed response,
	// an HTTP/2 protocol error, ...).
	KindOther Kind = iota
	// KindDNS: the host name did not resolve (unknown, or the DNS server
	// failed). The Viuva Negra report §3.4: unregistered sites.
	KindDNS
	// KindConnect: no TCP connection (refused, unreachable, or the connect
	// timeout passed).
	KindConnect
	// KindTLS: the TLS handshake failed (bad certificate, not TLS, ...).
	KindTLS
	// KindTimeout: Config.Timeout passed before the response headers.
	KindTimeout
	// KindReset: the server closed or reset the connection mid-exchange.
	KindReset
	// KindCanceled: the caller's context was canceled; not the host's
	// fault.
	KindCanceled
	// KindRequest: the request could not be built (bad URL or method);
	// nothing was sent.
	KindRequest
	// KindRefused: Config.AddrPolicy refused every address of the host;
	// nothing was sent. The error wraps addrpolicy.ErrRefused.
	KindRefused
)

var kindNames = [...]string{"other", "dns", "connect", "tls", "timeout", "reset", "canceled", "request", "refused"}

// String returns the kind's lower-case name, as used in metrics labels.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Error is the error type Fetch returns.
type Error struct {
	Kind Kind
	URL  string // the URL requested
	Err  error  // the underlying error
	// Answered: the server sent at least one byte of a response before
	// the failure (a header it could not parse, a body cut short or
	// mis-framed). The host is up; the fault is the page's.
	Answered bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("fetch: %s: %s: %v", e.URL, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of an error from Fetch, KindOther for other
// non-nil errors.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

// Answered reports whether err is an *Error of a fetch whose server sent
// part of a response (Error.Answered).
func Answered(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Answered
}

// dnsError and dialError are returned by the Client's dialer, so that the
// failure's phase survives net/http's wrapping.
type dnsError struct {
	host string
	err  error
}

func (e *dnsError) Error() string { return fmt.Sprintf("lookup %s: %v", e.host, e.err) }
func (e *dnsError) Unwrap() error { return e.err }

type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// classify picks the Kind of a transport error. tlsFailed says the
// handshake reported an error (from the client trace); ownTimeout says
// the fetch's own deadline passed.
func classify(err error, tlsFailed, ownTimeout, callerDone bool) Kind {
	var de *dnsError
	var ne *net.DNSError
	var dle *dialError
	var rhe tls.RecordHeaderError
	var cve *tls.CertificateVerificationError
	var ae tls.AlertError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	switch {
	case callerDone && !ownTimeout:
		return KindCanceled
	case errors.Is(err, addrpolicy.ErrRefused):
		return KindRefused
	case errors.As(err, &de) || errors.As(err, &ne):
		return KindDNS
	case errors.As(err, &dle):
		return KindConnect
	case tlsFailed || errors.As(err, &rhe) || errors.As(err, &cve) || errors.As(err, &ae) ||
		errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie):
		return KindTLS
	case ownTimeout || errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return KindTimeout
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF):
		return KindReset
	}
	return KindOther
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
