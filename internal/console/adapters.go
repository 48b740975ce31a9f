package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// FrontierSource shows and steers one crawl of a frontier. Seeds added
// through it are queued as they are given (priority 2, depth 0, their
// host's queue): a crawler that normalizes and scopes its seeds should
// wrap AddSeeds with its own.
func FrontierSource(f *frontier.Frontier, crawlID string) Frontier {
	return &frontierSource{f: f, crawl: crawlID}
}

type frontierSource struct {
	f     *frontier.Frontier
	crawl string
}

func (s *frontierSource) Stats() QueueStats {
	st := s.f.Stats(s.crawl, "")
	qs := QueueStats{Queued: st.Size, InFlight: st.InProcess, Completed: st.Completed, Hosts: st.Queues,
		Active: st.ActiveQueues, Retired: st.RetiredQueues}
	if t, ok := s.f.NextReady(); ok {
		qs.NextReady = t
	}
	return qs
}

func row(q frontier.QueueInfo) HostRow {
	return HostRow{Host: q.Key, Queued: q.Queued, InFlight: q.InFlight, Fetched: q.Completed, Retired: q.Retired, BlockedUntil: q.BlockedUntil}
}

func (s *frontierSource) Hosts(fn func(HostRow) bool) {
	s.f.Queues(s.crawl, func(q frontier.QueueInfo) bool { return fn(row(q)) })
}

func (s *frontierSource) Host(host string) (HostRow, error) {
	q, err := s.f.Queue(s.crawl, host)
	if errors.Is(err, frontier.ErrNotFound) {
		return HostRow{}, fmt.Errorf("%w: %s", ErrUnknownHost, host)
	}
	return row(q), err
}

func (s *frontierSource) Head(ctx context.Context, host string, n int) ([]QueueEntry, error) {
	h, err := s.f.Head(ctx, s.crawl, host, n)
	if errors.Is(err, frontier.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownHost, host)
	}
	out := make([]QueueEntry, len(h))
	for i, e := range h {
		out[i] = QueueEntry{URL: e.URL, Priority: int(e.Priority), Depth: e.Depth, Due: e.Due, Leased: e.Leased}
	}
	return out, err
}

func (s *frontierSource) Paused() bool          { return !s.f.Active() }
func (s *frontierSource) SetPaused(paused bool) { s.f.SetActive(!paused) }

func (s *frontierSource) AddSeeds(ctx context.Context, urls []string) (int, error) {
	items := make([]frontier.Item, len(urls))
	for i, u := range urls {
		items[i] = frontier.Item{Info: frontier.URLInfo{URL: u, CrawlID: s.crawl, Priority: 2}}
	}
	st, err := s.f.Put(ctx, items)
	if err != nil {
		return 0, fmt.Errorf("console: add seeds: %w", err)
	}
	n := 0
	for _, x := range st {
		if x == frontier.OK {
			n++
		}
	}
	return n, nil
}

func (s *frontierSource) Block(ctx context.Context, host string, until time.Time) error {
	return s.f.BlockQueueUntil(ctx, s.crawl, host, until)
}

func (s *frontierSource) Retire(ctx context.Context, host, reason string) error {
	return s.f.Retire(ctx, s.crawl, host, reason)
}

// PolitenessSource shows and changes a politeness gate; robots is the
// gate's robots store (the Backend's Robots), read for the host view.
func PolitenessSource(g *politeness.Gate, robots politeness.RobotsStore) Politeness {
	return &gateSource{g: g, robots: robots}
}

type gateSource struct {
	g      *politeness.Gate
	robots politeness.RobotsStore
}

func (s *gateSource) Host(ctx context.Context, key string) (HostPoliteness, error) {
	origin := ""
	if ri, err := s.Robots(ctx, key); err == nil {
		origin = ri.Origin
	}
	st, err := s.g.Status(ctx, key, origin)
	if err != nil {
		return HostPoliteness{}, err
	}
	hp := HostPoliteness{Delay: st.Delays.Effective, Source: delaySource(st.Delays), InFlight: st.InFlight, Backoff: st.BackoffLevel}
	if !st.Open {
		hp.NextAllowed = st.NextAllowed
	}
	return hp, nil
}

// delaySource names the part of d that sets the effective delay.
func delaySource(d politeness.Delays) DelaySource {
	switch {
	case d.Backoff > 0:
		return SourceBackoff
	case d.Override:
		return SourceConfig
	case d.Effective == d.Configured && d.Manual:
		return SourceConfig
	case d.Effective == d.Configured && d.Configured >= max(d.Robots, d.Rate, d.Adaptive):
		return SourceDefault
	case d.Effective == d.Robots:
		return SourceRobots
	case d.Effective == d.Rate:
		return SourceRate
	case d.Effective == d.Adaptive:
		return SourceAdaptive
	}
	return SourceDefault
}

// Robots looks the host up as https and http origin and returns the one
// fetched last.
func (s *gateSource) Robots(ctx context.Context, host string) (RobotsInfo, error) {
	var best *politeness.RobotsEntry
	for _, scheme := range []string{"https://", "http://"} {
		e, err := s.robots.GetRobots(ctx, scheme+strings.ToLower(host))
		if errors.Is(err, politeness.ErrNotFound) {
			continue
		}
		if err != nil {
			return RobotsInfo{}, fmt.Errorf("console: robots of %s: %w", host, err)
		}
		if best == nil || e.Fetched.After(best.Fetched) {
			best = &e
		}
	}
	if best == nil {
		return RobotsInfo{}, fmt.Errorf("%w for %s", ErrNoRobots, host)
	}
	body := best.Body
	if len(body) == 0 {
		body = best.Good
	}
	return RobotsInfo{Origin: best.Origin, Result: string(best.Result), Status: best.Status, Err: best.Err,
		Fetched: best.Fetched, Expires: best.Expires, Body: body}, nil
}

func (s *gateSource) SetDelay(ctx context.Context, key string, d time.Duration, override bool) error {
	return s.g.SetDelay(ctx, key, d, override)
}

func (s *gateSource) ClearDelay(ctx context.Context, key string) error {
	return s.g.DeleteDelay(ctx, key)
}

func (s *gateSource) Delays(ctx context.Context, after string, limit int) ([]DelayRow, error) {
	in, err := s.g.ListDelays(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DelayRow, len(in))
	for i, d := range in {
		out[i] = DelayRow{Key: d.Key, Manual: d.Manual, HasManual: d.HasManual, Override: d.Override, Robots: d.Robots,
			Current: d.Current, Updated: d.Updated}
	}
	return out, nil
}

// LocalNode is the heartbeat row of this process alone, for a console
// not in a cluster: CPU, RSS and goroutines measured here, pages/s and in
// flight from the crawl (nil: zero).
type LocalNode struct {
	ID    string
	Crawl Crawl

	mu       sync.Mutex
	lastT    time.Time
	lastCPU  time.Duration
	lastPage int64
	cpu, pps float64
}

// Nodes returns the one row, its rates measured since the last call.
func (n *LocalNode) Nodes(ctx context.Context) ([]Node, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	cpu := cpuclock.Process()
	var p Progress
	if n.Crawl != nil {
		p = n.Crawl.Progress()
	}
	if dt := now.Sub(n.lastT).Seconds(); !n.lastT.IsZero() && dt > 0.2 {
		n.cpu = (cpu - n.lastCPU).Seconds() / dt
		n.pps = float64(p.Pages-n.lastPage) / dt
	}
	if n.lastT.IsZero() || now.Sub(n.lastT) > 200*time.Millisecond {
		n.lastT, n.lastCPU, n.lastPage = now, cpu, p.Pages
	}
	id := n.ID
	if id == "" {
		h, _ := os.Hostname()
		id = h + ":" + strconv.Itoa(os.Getpid())
	}
	return []Node{{ID: id, CPU: n.cpu, RSS: rss(), Goroutines: runtime.NumGoroutine(), PagesPerSec: n.pps,
		InFlight: p.InFlight, LastSeen: now}}, nil
}

// rss is the resident set size from /proc/self/statm, else the bytes the
// Go runtime holds from the system.
func rss() int64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys)
}

// WithSeeds returns f with its AddSeeds replaced by add: a crawler passes
// its own seeding (normalization, scope, sitemaps) so that seeds added in
// the console are treated as those of the command line.
func WithSeeds(f Frontier, add func(ctx context.Context, urls []string) (int, error)) Frontier {
	return seeded{Frontier: f, add: add}
}

type seeded struct {
	Frontier
	add func(ctx context.Context, urls []string) (int, error)
}

func (s seeded) AddSeeds(ctx context.Context, urls []string) (int, error) { return s.add(ctx, urls) }
