package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// TestMain lets a test run the command line in a child process (the test
// binary itself, with COURTESY_CLI_HELPER=1), to kill it with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("COURTESY_CLI_HELPER") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, Stdio(), os.Args[1:])
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// serveProcess runs `courtesy serve` on dir (and the extra flags) in a
// child process and returns it with the address it listens on.
func serveProcess(t *testing.T, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "COURTESY_CLI_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	re := regexp.MustCompile(`URLFrontier gRPC on (\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return cmd, addr
	case <-time.After(60 * time.Second):
		t.Fatal("courtesy serve did not start within 60 s")
	}
	return nil, ""
}

func dialFrontier(t *testing.T, addr string) pb.URLFrontierClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewURLFrontierClient(conn)
}

// putAll sends items on one PutURLs stream and returns the number of OK acks.
func putAll(t *testing.T, c pb.URLFrontierClient, items []*pb.URLItem) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for _, it := range items {
			if st.Send(it) != nil {
				return
			}
		}
		st.CloseSend()
	}()
	ok := 0
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return ok
		}
		if err != nil {
			t.Fatalf("PutURLs: %v", err)
		}
		if a.GetStatus() == pb.AckMessage_OK {
			ok++
		}
	}
}

func getAll(t *testing.T, c pb.URLFrontierClient, p *pb.GetParams) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := c.GetURLs(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		u, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("GetURLs: %v", err)
		}
		out = append(out, u.GetUrl())
	}
}

func testItems(n, completed int) []*pb.URLItem {
	var items []*pb.URLItem
	for i := range n {
		u := fmt.Sprintf("http://host%02d.test/page/%d", i%50, i)
		info := &pb.URLInfo{Url: u, Metadata: map[string]*pb.StringList{"n": {Values: []string{fmt.Sprint(i)}}}}
		if i < completed {
			items = append(items, &pb.URLItem{ID: u, Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: info}}})
		} else {
			items = append(items, &pb.URLItem{ID: u, Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: info}}})
		}
	}
	return items
}

// TestServeKill9 kills the service with SIGKILL after its puts were acked:
// every acked URL is there after a restart, and the URLs leased before the
// kill are served again (leases live in memory only).
func TestServeKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	cmd, addr := serveProcess(t, dir)
	c := dialFrontier(t, addr)
	if ok := putAll(t, c, testItems(600, 100)); ok != 600 {
		t.Fatalf("acked OK = %d, want 600", ok)
	}
	leased := getAll(t, c, &pb.GetParams{MaxUrlsPerQueue: 2, DelayRequestable: 3600, Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}})
	if len(leased) != 100 {
		t.Fatalf("leased %d, want 100 (2 of 50 queues)", len(leased))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	cmd, addr = serveProcess(t, dir)
	c = dialFrontier(t, addr)
	ctx := context.Background()
	st, err := c.GetStats(ctx, &pb.QueueWithinCrawlParams{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetSize() != 500 || st.GetCounts()["completed"] != 100 || st.GetInProcess() != 0 || st.GetNumberOfQueues() != 50 {
		t.Errorf("after kill -9: %v", st)
	}
	item, err := c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://host07.test/page/107"})
	if err != nil || !slices.Equal(item.GetKnown().GetInfo().GetMetadata()["n"].GetValues(), []string{"107"}) {
		t.Errorf("status after kill -9 = %v, %v", item, err)
	}
	again := getAll(t, c, &pb.GetParams{Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}})
	if len(again) != 500 {
		t.Errorf("served after restart %d, want all 500 (leases void)", len(again))
	}
	for _, u := range leased {
		if !slices.Contains(again, u) {
			t.Errorf("URL leased before the kill not served again: %s", u)
			break
		}
	}
	// A graceful stop exits 0.
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

func TestServeUsage(t *testing.T) {
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	if code := Main(context.Background(), env, []string{"serve", "-h"}); code != 0 || strings.Contains(out.String(), "not built") || !strings.Contains(out.String(), "--listen") && !strings.Contains(out.String(), "-listen") {
		t.Errorf("serve -h = %d, %q", code, out.String())
	}
	if code := Main(context.Background(), env, []string{"serve", "--default-delay", "-1s"}); code != 2 {
		t.Errorf("negative delay exit = %d, want 2", code)
	}
	if code := Main(context.Background(), env, []string{"serve", "--memory-limit-mib", "-1"}); code != 2 {
		t.Errorf("negative memory limit exit = %d, want 2", code)
	}
	if !strings.Contains(out.String(), "memory-limit-mib") {
		t.Errorf("serve -h does not list --memory-limit-mib: %q", out.String())
	}
	if code := Main(context.Background(), env, []string{"serve", "--procs", "-1"}); code != 2 {
		t.Errorf("negative --procs exit = %d, want 2", code)
	}
}

// TestApplyProcs checks which of --procs, GOMAXPROCS and the default wins.
func TestApplyProcs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	tests := []struct {
		name string
		args []string
		env  string // GOMAXPROCS
		want func(before int) int
	}{
		{"default", nil, "", func(b int) int { return urlfrontier.Procs(b) }},
		{"flag", []string{"--procs", "3"}, "", func(int) int { return 3 }},
		{"flag over the variable", []string{"--procs", "5"}, "1", func(int) int { return 5 }},
		{"the variable", nil, "1", func(b int) int { return b }},
		{"flag 0 is the default", []string{"--procs", "0"}, "1", func(b int) int { return urlfrontier.Procs(b) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tt.env)
			runtime.GOMAXPROCS(2)
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			n := fs.Int("procs", 0, "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := applyProcs(fs, *n); err != nil {
				t.Fatal(err)
			}
			if got, want := runtime.GOMAXPROCS(0), tt.want(2); got != want {
				t.Errorf("GOMAXPROCS = %d, want %d", got, want)
			}
		})
	}
}

// TestServePolitenessServices: `courtesy serve --api-listen` answers the
// politeness services as the proxy does, for an origin on loopback reached
// through --resolve and --allow-private (robots.txt read, Crawl-delay
// applied), and its admin API has a token kept in DATA/admin-token.
func TestServePolitenessServices(t *testing.T) {
	t.Setenv("COURTESY_ADMIN_TOKEN", "")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n")
			return
		}
		io.WriteString(w, "page")
	}))
	defer origin.Close()
	dir := t.TempDir()
	base, _, _, _, _ := startCmd(t, "serve", "--listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data", dir,
		"--log-level", "warn", "--allow-private", "--resolve", "*.test="+strings.TrimPrefix(origin.URL, "http://"))
	b, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	if err != nil {
		t.Fatalf("admin token file: %v", err)
	}
	token := strings.TrimSpace(string(b))

	post := func(path, body string, hdr ...string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		if strings.HasPrefix(path, "/admin/") {
			req.Method = "PUT"
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	robotsMsg := "Blocked because URL is excluded from allowed URLs."
	code, b := post("/politeness/verbose", `["http://site.test/a","http://site.test/b","http://site.test/private/x"]`)
	var got []struct {
		URL        string  `json:"url"`
		Error      *string `json:"error"`
		Allowed    bool    `json:"allowed"`
		RetryAfter int64   `json:"retryAfter"`
	}
	if err := json.Unmarshal(b, &got); err != nil || code != 200 || len(got) != 3 {
		t.Fatalf("verbose: %d %s", code, b)
	}
	for i, tt := range []struct {
		minRetry, maxRetry int64
		err                string
	}{
		// robots.txt was fetched (taking the slot): the host's delay is its
		// Crawl-delay of 2 s, above the default 1 s.
		{1001, 2000, "There must be a delay of 2000 milliseconds between each request."},
		{1001, 2000, "There must be a delay of 2000 milliseconds between each request."},
		{-1, -1, robotsMsg},
	} {
		r := got[i]
		if r.Allowed || r.Error == nil || !strings.HasPrefix(*r.Error, tt.err) || r.RetryAfter < tt.minRetry || r.RetryAfter > tt.maxRetry {
			t.Errorf("verbose[%d] = %s", i, b)
		}
	}
	auth := []string{"Authorization", "Bearer " + token}
	if code, b := post("/admin/delays/site.test", `{"delay": 3000}`); code != 401 {
		t.Errorf("admin without token: %d %s", code, b)
	}
	if code, b := post("/admin/delays/site.test", `{"delay": 3000}`, auth...); code != 200 {
		t.Errorf("admin put: %d %s", code, b)
	}
	if code, b := post("/politeness/verbose", `["http://site.test/c"]`); code != 200 || !strings.Contains(string(b), `"retryAfter":3000`) && !strings.Contains(string(b), "3000 milliseconds") {
		t.Errorf("after admin put: %d %s", code, b)
	}
}
