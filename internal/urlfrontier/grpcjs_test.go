package urlfrontier

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// repoRoot is the repository root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TestGrpcJSClient drives every RPC from Node's @grpc/grpc-js, which loads
// urlfrontier.proto at run time: an independent client of the wire API.
func TestGrpcJSClient(t *testing.T) {
	root := repoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): run scripts/install-test-deps (needs node and npm)", err)
	}
	dir := filepath.Join(root, "tools", "grpcjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js", "package.json")); err != nil {
		t.Fatalf("npm package @grpc/grpc-js missing in tools/grpcjs (%v): run scripts/install-test-deps", err)
	}
	ln := serveLoopback(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), ln.Addr().String(),
		filepath.Join(root, "internal", "urlfrontier", "urlfrontierpb", "urlfrontier.proto"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grpc-js client: %v\n%s", err, stderr.String())
	}
	type stream struct {
		Code  string            `json:"code"`
		Items []json.RawMessage `json:"items"`
	}
	var r struct {
		Put           stream `json:"put"`
		PutDiscovered stream `json:"putDiscovered"`
		Nodes         struct{ Values []string }
		Crawls        struct{ Values []string }
		Queues        struct {
			Values  []string
			Total   string
			CrawlID string
		}
		StatsBefore, StatsLeased struct {
			Size           string
			InProcess      int
			NumberOfQueues string
			Counts         map[string]string
			CrawlID        string
		}
		Get    stream
		Status struct {
			Known struct {
				Info struct {
					URL      string `json:"url"`
					Key      string
					Metadata map[string]struct{ Values []string }
				}
				RefetchableFromDate string `json:"refetchable_from_date"`
			}
			CreationDate string `json:"creation_date"`
		}
		StatusMissing                   struct{ Code string }
		Count                           struct{ Value string }
		List                            stream
		SetDelay, Block, SetInactive    struct{ Code string }
		GetBlocked, GetInactive         stream
		Limit                           struct{ Code string }
		LogLevel                        struct{ Code string }
		Active                          struct{ State bool }
		Purge, DeleteQueue, DeleteCrawl struct{ Value, Code string }
		CrawlsAfter                     struct{ Values []string }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	acks := map[string]string{}
	for _, raw := range r.Put.Items {
		var a struct{ ID, Status string }
		json.Unmarshal(raw, &a)
		acks[a.ID] = a.Status
	}
	want := map[string]string{"d1": "OK", "d2": "OK", "k1": "OK", "bad": "SKIPPED", "c2": "OK"}
	if r.Put.Code != "OK" || len(acks) != 5 {
		t.Errorf("PutURLs = %s %v", r.Put.Code, acks)
	}
	for id, w := range want {
		if acks[id] != w {
			t.Errorf("ack %s = %q, want %s", id, acks[id], w)
		}
	}
	if len(r.PutDiscovered.Items) != 1 || !bytes.Contains(r.PutDiscovered.Items[0], []byte(`"statuses":["SKIPPED","OK"]`)) {
		t.Errorf("PutDiscovered = %s", r.PutDiscovered.Items)
	}
	if !slices.Equal(r.Crawls.Values, []string{"DEFAULT", "jsCrawl"}) || len(r.Nodes.Values) != 0 {
		t.Errorf("crawls %v nodes %v", r.Crawls.Values, r.Nodes.Values)
	}
	if !slices.Equal(r.Queues.Values, []string{"mykey"}) || r.Queues.Total != "1" || r.Queues.CrawlID != "jsCrawl" {
		t.Errorf("queues = %+v", r.Queues)
	}
	if r.StatsBefore.Size != "3" || r.StatsBefore.Counts["completed"] != "1" || r.StatsBefore.CrawlID != "DEFAULT" || r.StatsBefore.NumberOfQueues != "1" {
		t.Errorf("stats = %+v", r.StatsBefore)
	}
	if len(r.Get.Items) != 2 || r.StatsLeased.InProcess != 2 {
		t.Errorf("GetURLs %d URLs, then inProcess %d; want 2 and 2", len(r.Get.Items), r.StatsLeased.InProcess)
	}
	if k := r.Status.Known; k.Info.URL != "http://js.test/1" || k.Info.Key != "js.test" || !slices.Equal(k.Info.Metadata["src"].Values, []string{"node"}) ||
		k.RefetchableFromDate == "0" || r.Status.CreationDate == "0" {
		t.Errorf("status = %+v", r.Status)
	}
	if r.StatusMissing.Code != "NOT_FOUND" || r.Limit.Code != "NOT_FOUND" {
		t.Errorf("missing URL %q, limit on unknown queue %q; want NOT_FOUND", r.StatusMissing.Code, r.Limit.Code)
	}
	if r.Count.Value != "4" || len(r.List.Items) != 4 {
		t.Errorf("count %s, list %d; want 4", r.Count.Value, len(r.List.Items))
	}
	if len(r.GetBlocked.Items) != 0 || len(r.GetInactive.Items) != 0 || r.Active.State {
		t.Errorf("blocked served %d, inactive served %d, active %v", len(r.GetBlocked.Items), len(r.GetInactive.Items), r.Active.State)
	}
	for name, code := range map[string]string{"SetDelay": r.SetDelay.Code, "Block": r.Block.Code, "SetLogLevel": r.LogLevel.Code, "SetActive": r.SetInactive.Code} {
		if code != "" {
			t.Errorf("%s failed: %s", name, code)
		}
	}
	if r.Purge.Value != "0" || r.DeleteQueue.Value != "3" || r.DeleteCrawl.Value != "1" || !slices.Equal(r.CrawlsAfter.Values, []string{"DEFAULT"}) {
		t.Errorf("purge %s, delete queue %s, delete crawl %s, crawls after %v", r.Purge.Value, r.DeleteQueue.Value, r.DeleteCrawl.Value, r.CrawlsAfter.Values)
	}
}
