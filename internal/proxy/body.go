package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// A request body is read whole from the client before the request asks
// the politeness gate for its host's slot: a client that trickles its body
// (one byte a minute) must hold no slot while it does, or every other
// client of the host waits or gets 429 behind it. This is nginx's default
// request buffering; the reading is bounded by a minimum data rate, as
// nginx's client_body_timeout and Apache's mod_reqtimeout bound it: the
// body must start within ClientBodyTimeout, and every ClientBodyMinRate
// bytes received give one more second. A slower client gets 408 and its
// connection is closed.

// bodyMemBytes is how much of a request body is kept in memory; the rest
// goes to a temporary file (bodies are at most MaxRequestBytes).
const bodyMemBytes = 1 << 20

// Errors of readBody.
var (
	errBodyTimeout  = errors.New("proxy: request body too slow")
	errBodyTooLarge = errors.New("proxy: request body too long")
)

// bufferedBody is a request body read from the client: in memory, or in
// memory and a temporary file.
type bufferedBody struct {
	mem  []byte
	file *os.File // nil when all of it is in mem
	n    int64
}

// reader returns a fresh reader over the whole body.
func (b *bufferedBody) reader() (io.Reader, error) {
	if b.file == nil {
		return bytes.NewReader(b.mem), nil
	}
	if _, err := b.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("proxy: request body: %w", err)
	}
	return io.MultiReader(bytes.NewReader(b.mem), b.file), nil
}

// close removes the temporary file, if any.
func (b *bufferedBody) close() {
	if b.file != nil {
		name := b.file.Name()
		_ = b.file.Close()
		_ = os.Remove(name)
		b.file = nil
	}
}

// readBody reads r's body whole, at most limit bytes, at least at the
// configured rate. The deadline is set on the client connection (through
// http.ResponseController), so that a stalled read ends without a timer
// goroutine; a connection that cannot take deadlines is read without one.
// now is the proxy's clock.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, rc *runtimeConfig, now func() time.Time) (*bufferedBody, error) {
	ctl := http.NewResponseController(w)
	start := now()
	timeout, rate := rc.ClientBodyTimeout, rc.ClientBodyMinRate
	deadline := func(n int64) time.Time {
		return start.Add(timeout + time.Duration(n/rate)*time.Second)
	}
	canDeadline := ctl.SetReadDeadline(deadline(0)) == nil
	defer func() {
		if canDeadline {
			_ = ctl.SetReadDeadline(time.Time{})
		}
	}()
	b := &bufferedBody{}
	buf := make([]byte, 32<<10)
	for {
		m, err := r.Body.Read(buf)
		if m > 0 {
			if b.n+int64(m) > limit {
				b.close()
				return nil, fmt.Errorf("%w: more than %d bytes", errBodyTooLarge, limit)
			}
			if werr := b.write(buf[:m]); werr != nil {
				b.close()
				return nil, werr
			}
			if canDeadline {
				_ = ctl.SetReadDeadline(deadline(b.n))
			}
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			b.close()
			if netTimeout(err) || (canDeadline && !now().Before(deadline(b.n))) {
				return nil, fmt.Errorf("%w: %d bytes in %v, want at least %d bytes/s after %v", errBodyTimeout,
					b.n, now().Sub(start).Round(time.Millisecond), rate, timeout)
			}
			return nil, fmt.Errorf("proxy: read request body: %w", err)
		}
	}
}

// write appends p to the body, spilling to a temporary file past
// bodyMemBytes.
func (b *bufferedBody) write(p []byte) error {
	b.n += int64(len(p))
	if b.file == nil && len(b.mem)+len(p) <= bodyMemBytes {
		b.mem = append(b.mem, p...)
		return nil
	}
	if b.file == nil {
		f, err := os.CreateTemp("", "courtesy-body-*")
		if err != nil {
			return fmt.Errorf("proxy: request body: %w", err)
		}
		b.file = f
	}
	if _, err := b.file.Write(p); err != nil {
		return fmt.Errorf("proxy: request body: %w", err)
	}
	return nil
}

// netTimeout reports a network timeout (a read deadline that passed).
func netTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// bodyRefusal is the answer to a body that could not be read: 408 for a
// client too slow (and its connection closed, since the rest of its body
// will not be read), 413 for one too long, 400 otherwise.
func bodyRefusal(w http.ResponseWriter, err error, rc *runtimeConfig) refusal {
	switch {
	case errors.Is(err, errBodyTimeout):
		w.Header().Set("Connection", "close")
		return refusal{http.StatusRequestTimeout, "request-body-timeout", err.Error(), 0}
	case errors.Is(err, errBodyTooLarge):
		w.Header().Set("Connection", "close")
		return refusal{http.StatusRequestEntityTooLarge, "request-too-large", fmt.Sprintf("request bodies are limited to %d bytes", rc.MaxRequestBytes), 0}
	}
	w.Header().Set("Connection", "close")
	return refusal{http.StatusBadRequest, "bad-request", err.Error(), 0}
}
