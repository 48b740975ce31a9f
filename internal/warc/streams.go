package warc

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
)

// MaxStreams bounds the topics of a Streams.
const MaxStreams = 1024

var topicRe = regexp.MustCompile(`^[A-Za-z0-9_.]{1,64}$`)

// Streams keeps one Writer per topic in one directory (the OWler paper: "WARC
// files organized based on the identified topics ... multiple writing
// streams"). Topic T writes files named "{Prefix}-T-...". Safe for
// concurrent use.
type Streams struct {
	base Options
	mu   struct {
		sync.Mutex
		w      map[string]*Writer
		closed bool
	}
}

// NewStreams checks base (used for every topic, Prefix extended by the
// topic).
func NewStreams(base Options) (*Streams, error) {
	if err := base.Validate(); err != nil {
		return nil, err
	}
	s := &Streams{base: base}
	s.mu.w = map[string]*Writer{}
	return s, nil
}

// Writer returns the topic's writer, creating it on first use. Topics are
// 1-64 letters, digits, '_' or '.'; at most MaxStreams of them.
func (s *Streams) Writer(topic string) (*Writer, error) {
	if !topicRe.MatchString(topic) {
		return nil, fmt.Errorf("warc: topic %q: want 1-64 letters, digits, '_' or '.'", topic)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	if w, ok := s.mu.w[topic]; ok {
		return w, nil
	}
	if len(s.mu.w) >= MaxStreams {
		return nil, fmt.Errorf("warc: more than %d topics", MaxStreams)
	}
	o := s.base
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	o.Prefix += "-" + topic
	w, err := NewWriter(o)
	if err != nil {
		return nil, err
	}
	s.mu.w[topic] = w
	return w, nil
}

// Flush flushes and fsyncs every writer.
func (s *Streams) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, w := range s.mu.w {
		errs = append(errs, w.Flush())
	}
	return errors.Join(errs...)
}

// Close closes every writer.
func (s *Streams) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.closed = true
	var errs []error
	for _, w := range s.mu.w {
		errs = append(errs, w.Close())
	}
	return errors.Join(errs...)
}
