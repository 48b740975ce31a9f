package urlfrontier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// debianPython is Debian's interpreter, for which python3-grpcio and
// python3-protobuf install (a python3 earlier on PATH, such as a pyenv
// shim, may lack them).
const debianPython = "/usr/bin/python3"

// TestPyGRPCClient drives every RPC, the health service and server
// reflection from Python's grpcio (tools/pygrpc/client.py), with message
// classes Debian's protoc generates here from urlfrontier.proto: a second
// independent client of the wire API, on another gRPC core (C) and
// protobuf runtime than Go and Node.
func TestPyGRPCClient(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(debianPython); err != nil {
		t.Fatalf("%s missing (%v): run scripts/install-test-deps", debianPython, err)
	}
	if out, err := exec.Command(debianPython, "-I", "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import grpc and google.protobuf (%v: %s): run scripts/install-test-deps (python3-grpcio, python3-protobuf)", debianPython, err, bytes.TrimSpace(out))
	}
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Fatalf("protoc not found (%v): run scripts/install-test-deps (protobuf-compiler)", err)
	}
	dir := filepath.Join(root, "tools", "pygrpc")
	gen := t.TempDir()
	for _, args := range [][]string{
		{"--python_out=" + gen, "-I", filepath.Join(root, "internal", "urlfrontier", "urlfrontierpb"), "urlfrontier.proto"},
		{"--python_out=" + gen, "-I", dir, "health.proto", "reflection.proto"},
	} {
		if out, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
			t.Fatalf("protoc %v: %v\n%s", args, err, out)
		}
	}
	ln := serveLoopback(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, debianPython, "-I", filepath.Join(dir, "client.py"), ln.Addr().String(), gen)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python grpcio client: %v\n%s", err, stderr.String())
	}
	t.Logf("Python client ran in %v", time.Since(start).Round(time.Millisecond))
	var r pyResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	checkPyResult(t, &r, time.Now().Unix())
	if t.Failed() {
		t.Logf("client output: %s", out)
	}
}

// What tools/pygrpc/client.py prints.
type (
	pyAcks struct {
		Code string
		Acks [][2]string
	}
	pyURLs struct {
		Code     string
		URLs     [][3]string `json:"urls"`
		Metadata map[string]map[string][]string
	}
	pyStats struct {
		Code, Details  string
		Size           uint64
		InProcess      uint32
		NumberOfQueues uint64
		CrawlID        string
		Counts         map[string]uint64
	}
	pyQueues struct {
		Code, Details string
		Values        []string
		Total         uint64
		Start, Size   uint32
		CrawlID       string
	}
	pyItem struct {
		Code, Details       string
		Which, ID           string
		CreationDate        int64 `json:"creation_date"`
		URL, Key, CrawlID   string
		Metadata            map[string][]string
		RefetchableFromDate int64 `json:"refetchable_from_date"`
		HasInfo             bool  `json:"has_info"`
	}
	pyErr struct{ Code, Details string }
)

type pyResult struct {
	Put, PutInterleaved, PutNothing, Ack, PutInactive, Put5 pyAcks
	PutDiscovered                                           struct {
		Code string
		Acks map[string][]string
	}
	PutDiscoveredNothing                                                          string
	Nodes, Crawls, CrawlsAfter                                                    []string
	QueuesPage1, QueuesPage2, QueuesPast, QueuesOther                             pyQueues
	BlockedQueues, BlockedQueuesInactive, UnblockedQueues                         pyQueues
	StatsCrawl, StatsCrawlDefault, StatsQueue, StatsBlankCrawl, StatsUnknownField pyStats
	StatsLeased, StatsAcked, StatsDeleted                                         pyStats
	GetKey, GetKeyAgain, GetKeyNoCrawl, LeaseShort, LeaseHeld, LeaseExpired       pyURLs
	GetAny, Delay5First, Delay5Held, Delay5Next, GetBlocked, GetUnblocked         pyURLs
	GetInactive                                                                   pyURLs
	GetKeyOneof                                                                   *string
	GetKeyNoCrawlOneof                                                            *string
	AckDone                                                                       string
	Status, StatusMeta, StatusAcked, StatusDone                                   pyItem
	StatusMissing, StatusOtherKey, StatusNoURL, LimitUnknown                      pyErr
	Presence                                                                      struct {
		Unset       []bool
		SetEmpty    []any
		Cleared     []any
		CountLocal  []bool
		NonOptional string
	}
	ListFilter                                           []string
	ListFilterCase, ListFilterCaseFalse                  int
	ListEmptyFilter, ListAll                             int
	ListPages                                            [][]string
	ListItems                                            []pyItem
	CountFilter, CountFilterCase, CountKey, CountOther   uint64
	SetDelayPy3, SetDelayLong, SetDelayZero              string
	SetDelayDefault, SetDelayUnknownQueue, SetDelayMykey string
	Block, Unblock, BlockNoKey, Limit, LimitNoKey        string
	SetInactive, SetActive                               string
	ActiveOff, ActiveOn                                  bool
	LogLevels                                            []string
	LogLevelRoot, LogLevelUnknown                        string
	PurgeNothing, PurgeDay, PurgeQueue, CountPurged      uint64
	DeleteQueue, DeleteQueueUnknown, DeleteCrawl         uint64
	DeleteQueueNoKey                                     string
	Health                                               map[string]string
	Reflection                                           struct {
		Code, Details      string
		Services, Files    []string
		Methods            [][5]any
		JSONNameMismatches [][]string `json:"jsonNameMismatches"`
		SameService        bool
		SameFile           bool
	}
}

func checkPyResult(t *testing.T, r *pyResult, now int64) {
	t.Helper()
	// PutURLs: every item acked once, by ID (the URL when empty), invalid
	// ones SKIPPED without ending the stream, the duplicate SKIPPED.
	acks := map[string]string{}
	for _, a := range r.Put.Acks {
		if _, dup := acks[a[0]]; dup {
			t.Errorf("PutURLs acked %s twice", a[0])
		}
		acks[a[0]] = a[1]
	}
	wantAcks := map[string]string{"d1": "OK", "d2": "OK", "bad": "SKIPPED", "neither": "SKIPPED", "nohost": "SKIPPED",
		"d3": "OK", "d4": "OK", "k1": "OK", "k2": "OK", "http://py2.test/a": "OK", "dflt": "OK", "p4": "OK",
		"c1": "OK", "c2": "OK", "blank": "OK", "last": "SKIPPED"}
	if r.Put.Code != "OK" || !maps.Equal(acks, wantAcks) {
		t.Errorf("PutURLs = %s %v, want OK %v", r.Put.Code, acks, wantAcks)
	}
	if want := [][2]string{{"i0", "OK"}, {"i1", "SKIPPED"}, {"i2", "OK"}}; r.PutInterleaved.Code != "OK" || !slices.Equal(r.PutInterleaved.Acks, want) {
		t.Errorf("PutURLs one item at a time = %+v, want acks %v", r.PutInterleaved, want)
	}
	if r.PutNothing.Code != "OK" || len(r.PutNothing.Acks) != 0 || r.PutDiscoveredNothing != "OK" {
		t.Errorf("empty streams: PutURLs %+v, PutDiscovered %s", r.PutNothing, r.PutDiscoveredNothing)
	}
	if pd := r.PutDiscovered; pd.Code != "OK" || !slices.Equal(pd.Acks["b1"], []string{"SKIPPED", "OK"}) ||
		!slices.Equal(pd.Acks["b2"], []string{"SKIPPED", "OK", "SKIPPED"}) || pd.Acks["empty"] == nil || len(pd.Acks["empty"]) != 0 || len(pd.Acks) != 3 {
		t.Errorf("PutDiscovered = %+v", pd)
	}

	if len(r.Nodes) != 0 || !slices.Equal(r.Crawls, []string{"DEFAULT", "pyCrawl"}) {
		t.Errorf("ListNodes %v, ListCrawls %v (a blank crawl ID is DEFAULT)", r.Nodes, r.Crawls)
	}
	// ListQueues: DEFAULT holds py, py2, py3, py4, py6 and py7 (py5 comes later).
	q1, q2, qp := r.QueuesPage1, r.QueuesPage2, r.QueuesPast
	if !slices.Equal(q1.Values, []string{"py.test", "py2.test", "py3.test"}) || q1.Total != 6 || q1.Size != 3 || q1.CrawlID != "DEFAULT" ||
		!slices.Equal(q2.Values, []string{"py4.test", "py6.test", "py7.test"}) || q2.Total != 6 || q2.Start != 3 || q2.CrawlID != "DEFAULT" ||
		len(qp.Values) != 0 || qp.Total != 6 || qp.Start != 50 || qp.Size != 0 {
		t.Errorf("ListQueues pages %+v %+v %+v", q1, q2, qp)
	}
	if qo := r.QueuesOther; !slices.Equal(qo.Values, []string{"mykey"}) || qo.Total != 1 || qo.CrawlID != "pyCrawl" {
		t.Errorf("ListQueues pyCrawl = %+v", qo)
	}

	// GetStats: crawl "" and "DEFAULT" alike; 13 URLs not completed, 1 completed.
	for name, st := range map[string]pyStats{"\"\"": r.StatsCrawl, "DEFAULT": r.StatsCrawlDefault} {
		if st.Code != "" || st.Size != 13 || st.InProcess != 0 || st.NumberOfQueues != 6 || st.CrawlID != "DEFAULT" ||
			st.Counts["completed"] != 1 || st.Counts["active_queues"] != 6 {
			t.Errorf("GetStats crawl %s = %+v", name, st)
		}
	}
	for name, st := range map[string]pyStats{"queue": r.StatsQueue, "with an unknown field": r.StatsUnknownField} {
		if st.Code != "" || st.Size != 5 || st.NumberOfQueues != 1 || st.CrawlID != "DEFAULT" || st.Counts["completed"] != 1 || st.Counts["active_queues"] != 1 {
			t.Errorf("GetStats py.test %s = %+v", name, st)
		}
	}
	if st := r.StatsBlankCrawl; st.Size != 3 || st.CrawlID != "DEFAULT" {
		t.Errorf("GetStats crawl \" \" py2.test = %+v, want 3 URLs of DEFAULT", st)
	}

	// GetURLs.
	if g := r.GetKey; g.Code != "OK" || len(g.URLs) != 2 || r.GetKeyOneof == nil || *r.GetKeyOneof != "crawlID" {
		t.Errorf("GetURLs key py.test max_urls_per_queue 2 = %+v (oneof %v)", g, r.GetKeyOneof)
	} else {
		for _, u := range g.URLs {
			if !strings.HasPrefix(u[0], "http://py.test/") || u[1] != "py.test" || u[2] != "DEFAULT" || u[0] == "http://py.test/done" || u[0] == "http://py.test/later" {
				t.Errorf("GetURLs served %v", u)
			}
		}
		if md, ok := g.Metadata["http://py.test/1"]; ok && !slices.Equal(md["src"], []string{"python", "grpcio"}) {
			t.Errorf("GetURLs metadata of py.test/1 = %v", md)
		}
	}
	if r.StatsLeased.InProcess != 2 || r.StatsLeased.Size != 5 {
		t.Errorf("GetStats after leasing 2 = %+v", r.StatsLeased)
	}
	if len(r.GetKeyAgain.URLs) != 0 || len(r.GetKeyNoCrawl.URLs) != 0 || r.GetKeyNoCrawl.Code != "OK" || r.GetKeyNoCrawlOneof != nil {
		t.Errorf("GetURLs at the in-flight bound %+v; with a key and no crawlID case %+v (oneof %v); want both empty",
			r.GetKeyAgain, r.GetKeyNoCrawl, r.GetKeyNoCrawlOneof)
	}
	x := [][3]string{{"http://py3.test/x", "py3.test", "DEFAULT"}}
	if r.SetDelayPy3 != "OK" || !slices.Equal(r.LeaseShort.URLs, x) || len(r.LeaseHeld.URLs) != 0 || !slices.Equal(r.LeaseExpired.URLs, x) {
		t.Errorf("2 s lease: served %v, then %v, after 2.6 s %v; want x, nothing, x", r.LeaseShort.URLs, r.LeaseHeld.URLs, r.LeaseExpired.URLs)
	}
	keys := map[string]int{}
	for _, u := range r.GetAny.URLs {
		keys[u[1]]++
		if !slices.Contains([]string{"py2.test", "py4.test", "py6.test", "py7.test", "mykey"}, u[1]) {
			t.Errorf("GetURLs anyCrawlID served %v from a queue at its bound", u)
		}
	}
	if r.GetAny.Code != "OK" || len(r.GetAny.URLs) != 3 || len(keys) != 3 {
		t.Errorf("GetURLs max_queues 3 max_urls_per_queue 1 = %v, want 3 URLs of 3 queues", r.GetAny.URLs)
	}
	if r.Ack.Code != "OK" || !slices.Equal(r.Ack.Acks, [][2]string{{"ack", "OK"}}) || r.StatsAcked.InProcess != 1 || r.StatsAcked.Size != 4 || r.StatsAcked.Counts["completed"] != 2 {
		t.Errorf("ack of %s: %+v, then stats %+v", r.AckDone, r.Ack, r.StatsAcked)
	}

	// GetURLStatus.
	if st := r.Status; st.Code != "" || st.Which != "known" || !st.HasInfo || st.URL != "http://py2.test/b" || st.Key != "py2.test" || st.CrawlID != "DEFAULT" ||
		!slices.Equal(st.Metadata["m"], []string{"1"}) || st.CreationDate < now-60 || st.CreationDate > now || st.RefetchableFromDate != st.CreationDate {
		t.Errorf("GetURLStatus py2.test/b = %+v", st)
	}
	if st := r.StatusMeta; st.Which != "known" || !slices.Equal(st.Metadata["src"], []string{"python", "grpcio"}) || st.RefetchableFromDate == 0 {
		t.Errorf("GetURLStatus py.test/1 before its ack = %+v", st)
	}
	if st := r.StatusAcked; st.Which != "known" || st.URL != r.AckDone || st.CrawlID != "DEFAULT" || st.RefetchableFromDate != 0 || len(st.Metadata) != 0 {
		t.Errorf("GetURLStatus %s after its ack (completed, metadata overwritten) = %+v", r.AckDone, st)
	}
	if st := r.StatusDone; st.Which != "known" || st.RefetchableFromDate != 0 || st.CreationDate == 0 {
		t.Errorf("GetURLStatus of a completed URL = %+v", st)
	}
	if r.StatusMissing.Code != "NOT_FOUND" || r.StatusOtherKey.Code != "NOT_FOUND" || r.StatusNoURL.Code != "INVALID_ARGUMENT" {
		t.Errorf("GetURLStatus unknown URL %+v, other key %+v, no URL %+v", r.StatusMissing, r.StatusOtherKey, r.StatusNoURL)
	}

	// proto3 optional as Python sees it: unset, set to the zero value (on
	// the wire), cleared; a field without optional has no presence.
	p := r.Presence
	if !slices.Equal(p.Unset, []bool{false, false}) || fmt.Sprint(p.SetEmpty) != "[true true 4]" || fmt.Sprint(p.Cleared) != "[false 2]" ||
		!slices.Equal(p.CountLocal, []bool{true, false}) || p.NonOptional != "ValueError" {
		t.Errorf("presence = %+v", p)
	}

	// ListURLs and CountURLs.
	pyURLsAll := []string{"http://py.test/1", "http://py.test/2", "http://py.test/3", "http://py.test/4", "http://py.test/done", "http://py.test/later"}
	if got := slices.Sorted(slices.Values(r.ListFilter)); !slices.Equal(got, pyURLsAll) {
		t.Errorf("ListURLs filter PY.TEST/ ignoreCase = %v, want %v", got, pyURLsAll)
	}
	if r.ListFilterCase != 0 || r.ListFilterCaseFalse != 0 || r.ListEmptyFilter != 14 || r.ListAll != 14 {
		t.Errorf("ListURLs case-sensitive %d, ignoreCase false %d, filter \"\" %d, all %d; want 0, 0, 14, 14",
			r.ListFilterCase, r.ListFilterCaseFalse, r.ListEmptyFilter, r.ListAll)
	}
	var paged []string
	for i, pg := range r.ListPages {
		if len(pg) != max(0, min(2, 6-2*i)) {
			t.Errorf("ListURLs page %d = %v", i, pg)
		}
		paged = append(paged, pg...)
	}
	if slices.Sort(paged); !slices.Equal(paged, pyURLsAll) {
		t.Errorf("ListURLs pages of 2 = %v, want each of %v once", r.ListPages, pyURLsAll)
	}
	if len(r.ListItems) != 2 {
		t.Errorf("ListURLs pyCrawl mykey = %+v", r.ListItems)
	}
	for _, it := range r.ListItems {
		if it.Which != "known" || it.Key != "mykey" || it.CrawlID != "pyCrawl" || it.RefetchableFromDate == 0 || it.CreationDate == 0 {
			t.Errorf("ListURLs item %+v", it)
		}
	}
	if r.CountFilter != 6 || r.CountFilterCase != 0 || r.CountKey != 6 || r.CountOther != 2 {
		t.Errorf("CountURLs filter %d, case-sensitive %d, key %d, pyCrawl %d; want 6 0 6 2", r.CountFilter, r.CountFilterCase, r.CountKey, r.CountOther)
	}

	// SetDelay: 3600 s holds py5.test after one URL; 0 lets the next out.
	if r.Put5.Code != "OK" || len(r.Put5.Acks) != 2 || r.SetDelayLong != "OK" || len(r.Delay5First.URLs) != 1 || len(r.Delay5Held.URLs) != 0 ||
		r.SetDelayZero != "OK" || len(r.Delay5Next.URLs) != 1 || len(r.Delay5First.URLs) == 1 && r.Delay5Next.URLs[0] == r.Delay5First.URLs[0] {
		t.Errorf("SetDelay: put %+v, first %v, held %v, after delay 0 %v", r.Put5, r.Delay5First.URLs, r.Delay5Held.URLs, r.Delay5Next.URLs)
	}
	if r.SetDelayDefault != "OK" || r.SetDelayUnknownQueue != "OK" || r.SetDelayMykey != "OK" {
		t.Errorf("SetDelay default %s, unknown queue %s, mykey %s", r.SetDelayDefault, r.SetDelayUnknownQueue, r.SetDelayMykey)
	}
	// BlockQueueUntil.
	servedMykey := 0
	for _, u := range r.GetAny.URLs {
		if u[1] == "mykey" {
			servedMykey++
		}
	}
	if r.Block != "OK" || len(r.BlockedQueues.Values) != 0 || r.BlockedQueues.Total != 0 || !slices.Equal(r.BlockedQueuesInactive.Values, []string{"mykey"}) ||
		len(r.GetBlocked.URLs) != 0 || r.Unblock != "OK" || !slices.Equal(r.UnblockedQueues.Values, []string{"mykey"}) ||
		len(r.GetUnblocked.URLs)+servedMykey != 2 || r.BlockNoKey != "INVALID_ARGUMENT" {
		t.Errorf("BlockQueueUntil %s: queues %+v, inactive too %+v, served %v; unblock %s: queues %+v, served %v; no key %s",
			r.Block, r.BlockedQueues, r.BlockedQueuesInactive, r.GetBlocked.URLs, r.Unblock, r.UnblockedQueues, r.GetUnblocked.URLs, r.BlockNoKey)
	}
	if r.Limit != "OK" || r.LimitUnknown.Code != "NOT_FOUND" || r.LimitNoKey != "INVALID_ARGUMENT" {
		t.Errorf("SetCrawlLimit %s, unknown queue %+v, no key %s", r.Limit, r.LimitUnknown, r.LimitNoKey)
	}
	if r.SetInactive != "OK" || r.ActiveOff || len(r.GetInactive.URLs) != 0 || !slices.Equal(r.PutInactive.Acks, [][2]string{{"off", "OK"}}) || r.SetActive != "OK" || !r.ActiveOn {
		t.Errorf("SetActive false %s: active %v, served %v, put %+v; SetActive true %s: active %v",
			r.SetInactive, r.ActiveOff, r.GetInactive.URLs, r.PutInactive, r.SetActive, r.ActiveOn)
	}
	if !slices.Equal(r.LogLevels, []string{"OK", "OK", "OK", "OK", "OK"}) || r.LogLevelRoot != "OK" || r.LogLevelUnknown != "INVALID_ARGUMENT" {
		t.Errorf("SetLogLevel %v, ROOT %s, level 99 %s", r.LogLevels, r.LogLevelRoot, r.LogLevelUnknown)
	}
	if r.PurgeNothing != 0 || r.PurgeDay != 0 || r.PurgeQueue != 2 || r.CountPurged != 0 {
		t.Errorf("PurgeURLs unknown queue %d, 1 day %d, py7.test 0 days %d (then %d left)", r.PurgeNothing, r.PurgeDay, r.PurgeQueue, r.CountPurged)
	}
	if r.DeleteQueue != 4 || r.DeleteQueueUnknown != 0 || r.DeleteQueueNoKey != "INVALID_ARGUMENT" || r.StatsDeleted.Size != 0 || r.StatsDeleted.NumberOfQueues != 0 {
		t.Errorf("DeleteQueue py.test %d, unknown %d, no key %s, then stats %+v", r.DeleteQueue, r.DeleteQueueUnknown, r.DeleteQueueNoKey, r.StatsDeleted)
	}
	if r.DeleteCrawl != 2 || !slices.Equal(r.CrawlsAfter, []string{"DEFAULT"}) {
		t.Errorf("DeleteCrawl pyCrawl %d, then crawls %v", r.DeleteCrawl, r.CrawlsAfter)
	}

	if want := map[string]string{"": "SERVING", ServiceName: "SERVING", "no.such.Service": "NOT_FOUND", "watch": "SERVING"}; !maps.Equal(r.Health, want) {
		t.Errorf("health = %v, want %v", r.Health, want)
	}
	rf := r.Reflection
	if rf.Code != "OK" || !slices.Contains(rf.Services, ServiceName) || !slices.Contains(rf.Services, "grpc.health.v1.Health") ||
		!slices.Equal(rf.Files, []string{"urlfrontier.proto"}) || len(rf.Methods) != 19 || len(rf.JSONNameMismatches) != 0 || !rf.SameService || !rf.SameFile {
		t.Errorf("reflection = %+v", rf)
	}
}
