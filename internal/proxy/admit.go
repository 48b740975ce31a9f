// Admission: the one prelude every proxied request passes (plain, CONNECT,
// WebSocket), asking the gate in the request's mode, and the answers
// the gate's refusals become.

package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// admit asks the gate for a permit in the request's mode. waitCtx bounds
// the whole request (sequential timeout); clientCtx ends when the client
// goes away. A nil permit comes with the refusal to send.
func (p *Proxy) admit(waitCtx, clientCtx context.Context, u *url.URL, mode Mode, timeout time.Duration, rc *runtimeConfig, x *exchange) (*politeness.Permit, refusal) {
	key, err := p.gate.Config().KeyFunc(waitCtx, u)
	if err != nil {
		return nil, refusal{http.StatusBadRequest, "bad-request", err.Error(), 0}
	}
	x.key = key
	if mode == ModeReject {
		permit, d, err := p.gate.Try(waitCtx, u)
		if err != nil {
			return nil, gateError(x, err)
		}
		if permit == nil {
			return nil, decisionRefusal(d)
		}
		return permit, refusal{}
	}

	// Fast path: nobody is held for this key, so asking the gate at once
	// keeps arrival order. With the gate open (the common case) no request
	// ever queues, and no turn is handed between goroutines.
	if p.queues.idle(key) {
		permit, d, err := p.gate.Try(waitCtx, u)
		switch {
		case err != nil:
			return nil, gateError(x, err)
		case permit != nil:
			return permit, refusal{}
		case d.Reason == politeness.ReasonRobots || d.Reason == politeness.ReasonRobotsUnavailable:
			return nil, decisionRefusal(d)
		}
	}
	kq, err := p.queues.enter(key, rc.MaxQueuePerHost, rc.MaxQueue)
	if err != nil {
		return nil, refusal{http.StatusServiceUnavailable, "queue-full",
			fmt.Sprintf("too many requests are waiting (at most %d for one host, %d in all)", rc.MaxQueuePerHost, rc.MaxQueue), time.Second}
	}
	defer p.queues.leave(key, kq)
	started := p.now()
	ctx, cancel := context.WithTimeoutCause(waitCtx, timeout, errWaitTimeout)
	defer cancel()
	var permit *politeness.Permit
	if err = kq.acquire(ctx); err == nil {
		permit, err = p.gate.Wait(ctx, u)
		kq.pass()
	}
	waited := p.now().Sub(started)
	x.WaitMs = waited.Milliseconds()
	p.m.wait.Observe(waited.Seconds())
	if err == nil {
		return permit, refusal{}
	}
	if d, ok := politeness.Denied(err); ok {
		return nil, decisionRefusal(d)
	}
	switch {
	case clientCtx.Err() != nil:
		return nil, refusal{499, "client-gone", "the client went away while waiting", 0}
	case errors.Is(context.Cause(ctx), errSequentialTimeout) || errors.Is(context.Cause(waitCtx), errSequentialTimeout):
		return nil, refusal{http.StatusGatewayTimeout, "sequential-timeout",
			fmt.Sprintf("the request did not get its turn within %v", timeout), 0}
	case errors.Is(context.Cause(ctx), errWaitTimeout):
		retry := time.Second
		if d, err := p.gate.Peek(clientCtx, u); err == nil && d.RetryAfter > 0 {
			retry = d.RetryAfter
		}
		return nil, refusal{http.StatusTooManyRequests, "wait-timeout",
			fmt.Sprintf("the host's turn did not come within %v", timeout), retry}
	}
	return nil, gateError(x, err)
}

var errWaitTimeout = errors.New("proxy: wait timeout")

// decisionRefusal turns a gate Decision into the answer of the polite-proxy thesis
// §4.7.1: 403 for robots.txt, 429 with the wait for the rest.
func decisionRefusal(d politeness.Decision) refusal {
	msg := d.Detail
	switch d.Reason {
	case politeness.ReasonRobots:
		if msg == "" {
			msg = "Blocked because URL is excluded from allowed URLs."
		}
		return refusal{http.StatusForbidden, "robots", msg, 0}
	case politeness.ReasonRobotsUnavailable:
		// robots.txt could not be fetched; say why when the cause is the
		// destination, not the origin's robots.txt. The robots cache keeps
		// the fetch error as text, hence the text match.
		switch {
		case strings.Contains(msg, ErrPrivateDestination.Error()):
			return refusal{http.StatusForbidden, "private-destination", "the host name resolves to a loopback, private or link-local address, which is refused", 0}
		case tlsVerifyFailed(msg):
			return refusal{http.StatusBadGateway, "tls-verify-failed",
				"the origin's TLS certificate could not be verified (" + msg + "); an operator may allow this host with upstream-insecure-hosts", max(d.RetryAfter, 0)}
		case originTimedOut(msg):
			return refusal{http.StatusGatewayTimeout, "upstream-timeout",
				"the origin did not answer: " + msg, max(d.RetryAfter, 0)}
		case originUnreachable(msg):
			return refusal{http.StatusBadGateway, "upstream-error",
				"the origin could not be reached: " + msg, max(d.RetryAfter, 0)}
		}
		if msg == "" {
			msg = "robots.txt is unavailable: the host is treated as disallowing everything"
		}
		return refusal{http.StatusForbidden, "robots-unavailable", msg, max(d.RetryAfter, 0)}
	}
	if msg == "" {
		msg = fmt.Sprintf("There must be a delay of %d milliseconds between each request.", d.Delays.Effective.Milliseconds())
	}
	return refusal{http.StatusTooManyRequests, string(d.Reason), msg, max(d.RetryAfter, time.Millisecond)}
}

// originUnreachable reports whether a robots.txt fetch error (as text:
// the robots cache keeps it so) says the origin could not be reached at
// all: the name did not resolve, the connection was refused or reset, or
// the origin hung up before answering. Nothing can be forwarded to such
// an origin either (RFC 9309 §2.3.1.4 makes it "disallow all"), but the
// client is told what a gateway says of an origin it cannot reach, 502,
// rather than a 403 that blames robots.txt. A robots.txt that answered
// 5xx stays robots-unavailable.
func originUnreachable(msg string) bool {
	for _, s := range []string{"dial tcp", "dial udp", "no such host", "connection refused",
		"connection reset", "network is unreachable", "no route to host", ": EOF", "server closed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// originTimedOut reports whether a robots.txt fetch error says the
// origin did not answer in time (connect or response header): 504, as
// for a page whose origin hangs.
func originTimedOut(msg string) bool {
	return strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "Client.Timeout exceeded") ||
		strings.Contains(msg, "context deadline exceeded")
}

// gateError is the answer when the politeness state fails (Redis down):
// the client is told so without the cause, which names addresses; the
// log and the admin-only trace have it.
func gateError(x *exchange, err error) refusal {
	x.Error = err.Error()
	return refusal{http.StatusBadGateway, "gate-error", "the politeness state is unavailable", 0}
}

// admitOrRefuse is the admission prelude every proxied request passes
// after its own checks (plain requests, CONNECT tunnels, WebSocket
// handshakes): a permit from the gate in the request's mode, or the
// refusal sent and nil. waitCtx bounds the wait (a sequential request's
// timeout); the client's own context tells a client gone.
func (p *Proxy) admitOrRefuse(waitCtx context.Context, w http.ResponseWriter, r *http.Request, u *url.URL, mode Mode, timeout time.Duration, rc *runtimeConfig, x *exchange) *politeness.Permit {
	permit, f := p.admit(waitCtx, r.Context(), u, mode, timeout, rc, x)
	if permit == nil {
		p.refuse(w, r, x, f)
	}
	return permit
}
