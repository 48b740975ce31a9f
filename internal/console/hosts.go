package console

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The hosts table is served from a snapshot of every host's row, rebuilt
// in the background when it is older than the TTL (and never more often
// than twenty times its last build took, so a million hosts cost at most
// about 5 % of a core while someone is looking, nothing otherwise). A page
// sorted by any column is answered by a bounded heap over the matching
// rows (O(n log k) for the first k rows); a deep page of a column sorts
// that column once per snapshot and keeps the order.

// sortKeys are the sortable columns.
var sortKeys = []string{"host", "queued", "in_flight", "fetched", "blocked_until", "retired"}

// heapPageLimit is the deepest offset+limit a bounded heap answers; deeper
// pages use (and cache) a full sort of the column.
const heapPageLimit = 5000

// HostQuery selects a page of the hosts table.
type HostQuery struct {
	// Search keeps hosts whose name contains it (case-insensitive).
	Search string
	// Sort is a column of sortKeys; default "host".
	Sort string
	// Desc sorts in descending order.
	Desc bool
	// Offset and Limit page; Limit 1..500, default 50.
	Offset, Limit int
}

// HostPage is one page of the hosts table.
type HostPage struct {
	// Total is the number of hosts matching Search.
	Total int `json:"total"`
	// Offset and Limit echo the query.
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	// Snapshot is when the rows were taken.
	Snapshot time.Time  `json:"snapshot"`
	Rows     []HostView `json:"rows"`
}

// HostView is a row with what the page adds: the politeness state and
// robots.txt of the host, looked up for the rows shown only.
type HostView struct {
	HostRow
	Politeness *HostPoliteness `json:"politeness,omitempty"`
	Robots     *RobotsSummary  `json:"robots,omitempty"`
}

// RobotsSummary is a robots.txt's status and age.
type RobotsSummary struct {
	Result  string    `json:"result"`
	Status  int       `json:"status,omitempty"`
	Fetched time.Time `json:"fetched,omitzero"`
	AgeSec  int64     `json:"age_s"`
}

func (q *HostQuery) check() error {
	if q.Sort == "" {
		q.Sort = "host"
	}
	if !slices.Contains(sortKeys, q.Sort) {
		return fmt.Errorf("console: unknown sort column %q (one of %s)", q.Sort, strings.Join(sortKeys, ", "))
	}
	if q.Offset < 0 {
		return fmt.Errorf("console: negative offset %d", q.Offset)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Limit < 0 || q.Limit > 500 {
		return fmt.Errorf("console: limit %d outside 1..500", q.Limit)
	}
	if len(q.Search) > 255 {
		return fmt.Errorf("console: search longer than 255 bytes")
	}
	q.Search = strings.ToLower(strings.TrimSpace(q.Search))
	return nil
}

type hostIndex struct {
	src func(func(HostRow) bool)
	// size, when set, tells how many rows to expect (the slice is made
	// that big at once, instead of growing through a dozen copies).
	size func() int
	ttl  time.Duration
	now  func() time.Time

	mu struct {
		sync.Mutex
		snap     *hostSnapshot
		building bool
		lastCost time.Duration
		lastUse  time.Time
	}
}

// idleDrop is how long a snapshot is kept after the last page asked for
// it (a million rows hold about 100 MB).
const idleDrop = time.Minute

// dropIdle forgets the snapshot when no page was asked for since idleDrop.
func (x *hostIndex) dropIdle() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mu.snap != nil && !x.mu.building && x.now().Sub(x.mu.lastUse) > idleDrop {
		x.mu.snap = nil
	}
}

type hostSnapshot struct {
	at   time.Time
	rows []HostRow
	// lower holds the lower-cased host names (for search).
	lower []string
	// orders caches full sorts by column, made for deep pages.
	mu     sync.Mutex
	orders map[string][]int32
}

func newHostIndex(src func(func(HostRow) bool), ttl time.Duration, now func() time.Time) *hostIndex {
	return &hostIndex{src: src, ttl: ttl, now: now}
}

func (x *hostIndex) build() *hostSnapshot {
	start := time.Now()
	s := &hostSnapshot{at: x.now(), orders: map[string][]int32{}}
	if x.size != nil {
		s.rows = make([]HostRow, 0, x.size()+x.size()/16)
	}
	x.src(func(r HostRow) bool {
		s.rows = append(s.rows, r)
		return true
	})
	s.lower = make([]string, len(s.rows))
	for i := range s.rows {
		s.lower[i] = strings.ToLower(s.rows[i].Host)
	}
	x.mu.Lock()
	x.mu.snap, x.mu.building, x.mu.lastCost = s, false, time.Since(start)
	x.mu.Unlock()
	return s
}

// snapshot returns the current snapshot, building the first one now and
// refreshing a stale one in the background.
func (x *hostIndex) snapshot() *hostSnapshot {
	x.mu.Lock()
	x.mu.lastUse = x.now()
	s := x.mu.snap
	if s == nil {
		x.mu.Unlock()
		return x.build()
	}
	age := x.now().Sub(s.at)
	if age > max(x.ttl, 20*x.mu.lastCost) && !x.mu.building {
		x.mu.building = true
		go x.build()
	}
	x.mu.Unlock()
	return s
}

// less orders rows by col (descending when desc), ties by host name
// ascending.
func (s *hostSnapshot) less(col string, desc bool) func(a, b int32) int {
	r := s.rows
	sign := 1
	if desc {
		sign = -1
	}
	byHost := func(a, b int32) int { return sign * strings.Compare(r[a].Host, r[b].Host) }
	then := func(c int, a, b int32) int {
		if c != 0 {
			return sign * c
		}
		return strings.Compare(r[a].Host, r[b].Host)
	}
	switch col {
	case "queued":
		return func(a, b int32) int { return then(cmp.Compare(r[a].Queued, r[b].Queued), a, b) }
	case "in_flight":
		return func(a, b int32) int { return then(cmp.Compare(r[a].InFlight, r[b].InFlight), a, b) }
	case "fetched":
		return func(a, b int32) int { return then(cmp.Compare(r[a].Fetched, r[b].Fetched), a, b) }
	case "blocked_until":
		return func(a, b int32) int { return then(r[a].BlockedUntil.Compare(r[b].BlockedUntil), a, b) }
	case "retired":
		return func(a, b int32) int { return then(strings.Compare(r[a].Retired, r[b].Retired), a, b) }
	}
	return byHost
}

func (s *hostSnapshot) sortedBy(col string, desc bool) []int32 {
	idx := make([]int32, len(s.rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, s.less(col, desc))
	return idx
}

// order returns the cached full sort of col, sorting it now if deep
// pages need it.
func (s *hostSnapshot) order(col string, desc, need bool) []int32 {
	key := col
	if desc {
		key += " desc"
	}
	s.mu.Lock()
	o := s.orders[key]
	s.mu.Unlock()
	if o != nil || !need {
		return o
	}
	o = s.sortedBy(col, desc)
	s.mu.Lock()
	s.orders[key] = o
	s.mu.Unlock()
	return o
}

// page answers q (already checked).
func (s *hostSnapshot) page(q HostQuery) ([]HostRow, int) {
	match := func(i int32) bool { return q.Search == "" || strings.Contains(s.lower[i], q.Search) }
	k := q.Offset + q.Limit
	cmpf := s.less(q.Sort, q.Desc)
	if o := s.order(q.Sort, q.Desc, k > heapPageLimit); o != nil {
		total, out := 0, make([]HostRow, 0, q.Limit)
		for _, i := range o {
			if !match(i) {
				continue
			}
			if total >= q.Offset && total < k {
				out = append(out, s.rows[i])
			}
			total++
		}
		return out, total
	}
	// A bounded max-heap (by cmpf) keeps the k first rows.
	h := &boundedHeap{cmp: cmpf}
	total := 0
	for i := range s.rows {
		ii := int32(i)
		if !match(ii) {
			continue
		}
		total++
		if len(h.idx) < k {
			heap.Push(h, ii)
		} else if cmpf(ii, h.idx[0]) < 0 {
			h.idx[0] = ii
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.idx, cmpf)
	out := make([]HostRow, 0, q.Limit)
	for j := q.Offset; j < len(h.idx); j++ {
		out = append(out, s.rows[h.idx[j]])
	}
	return out, total
}

// boundedHeap is a max-heap of row indices under cmp: its top is the
// worst of the rows kept.
type boundedHeap struct {
	idx []int32
	cmp func(a, b int32) int
}

func (h *boundedHeap) Len() int           { return len(h.idx) }
func (h *boundedHeap) Less(i, j int) bool { return h.cmp(h.idx[i], h.idx[j]) > 0 }
func (h *boundedHeap) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *boundedHeap) Push(x any)         { h.idx = append(h.idx, x.(int32)) }
func (h *boundedHeap) Pop() any {
	n := len(h.idx) - 1
	v := h.idx[n]
	h.idx = h.idx[:n]
	return v
}
