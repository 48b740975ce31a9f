package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// frontierCmd runs `courtesy frontier --address addr args...` in-process.
func frontierCmd(t *testing.T, addr string, args ...string) (string, int) {
	t.Helper()
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	// A generous deadline: under the race detector on a loaded machine a
	// DeleteQueue (which clears the service's 32 MiB seen cache) can pass
	// the default 30 s.
	code := Main(context.Background(), env, append([]string{"frontier", "--address", addr, "--timeout", "3m"}, args...))
	if code != 0 {
		t.Logf("frontier %v: exit %d: %s", args, code, errb.String())
	}
	return out.String(), code
}

const putFile = `{"discovered":{"info":{"url":"http://a.test/1","metadata":{"k":{"values":["v1","v2"]}}}}}
{"known":{"info":{"url":"http://a.test/done","key":"a.test"},"refetchableFromDate":"0"}}
{"known":{"info":{"url":"http://b.test/later","crawlID":"c2"},"refetchableFromDate":"4102444800"}}

{"discovered":{"info":{"url":"http://b.test/x","key":"custom","crawlID":"c2"}},"ID":"mine"}
{"discovered":{"info":{"url":"no host"}}}
`

func TestFrontierCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	_, addr := serveProcess(t, filepath.Join(dir, "a"))
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(putFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string // substring of stdout
		code int
	}{
		{[]string{"put", "-f", in}, "5 items: 4 OK, 1 SKIPPED, 0 FAIL", 0},
		{[]string{"nodes"}, addr, 0},
		{[]string{"crawls"}, "DEFAULT\nc2\n", 0},
		{[]string{"--crawl", "c2", "queues", "--include-inactive"}, "b.test\ncustom\n", 0},
		{[]string{"stats"}, "size\t1\n", 0},
		{[]string{"stats", "--key", "a.test"}, "completed\t1\n", 0},
		{[]string{"count", "--filter", "A.TEST", "--ignore-case"}, "2\n", 0},
		{[]string{"--crawl", "c2", "count"}, "2\n", 0},
		{[]string{"status", "http://a.test/1"}, `"values":["v1","v2"]`, 0},
		{[]string{"set-delay", "--key", "a.test", "5"}, "", 0},
		{[]string{"set-delay", "2"}, "", 0},
		{[]string{"block", "--key", "custom", "2030-01-01T00:00:00Z"}, "", 0},
		{[]string{"crawl-limit", "--key", "a.test", "10"}, "", 0},
		{[]string{"active", "off"}, "", 0},
		{[]string{"active"}, "off\n", 0},
		{[]string{"get"}, "", 0},
		{[]string{"active", "on"}, "", 0},
		{[]string{"get", "--lease", "60"}, "http://a.test/1\ta.test\tDEFAULT\n", 0},
		{[]string{"log-level", "urlfrontier", "debug"}, "", 0},
		{[]string{"list", "--size", "1"}, `"url":"http://a.test/1"`, 0},
		{[]string{"log-level", "x", "loud"}, "", 2},
		{[]string{"frobnicate"}, "", 2},
		{[]string{"block", "--key", "k"}, "", 2},
		{[]string{"put"}, "", 2},
		{[]string{"crawl-limit", "--key", "nope.test", "1"}, "", 1},
	}
	for _, tc := range tests {
		out, code := frontierCmd(t, addr, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("frontier %v = %d %q, want %d and %q", tc.args, code, out, tc.code, tc.want)
		}
	}

	// dump, put into a fresh service, dump again: nothing lost.
	d1 := filepath.Join(dir, "d1.jsonl")
	if _, code := frontierCmd(t, addr, "dump", "-o", d1); code != 0 {
		t.Fatal("dump failed")
	}
	_, addr2 := serveProcess(t, filepath.Join(dir, "b"))
	if out, code := frontierCmd(t, addr2, "put", "-f", d1); code != 0 || !strings.Contains(out, "4 OK") {
		t.Fatalf("put dump = %d %q", code, out)
	}
	d2 := filepath.Join(dir, "d2.jsonl")
	if _, code := frontierCmd(t, addr2, "dump", "-o", d2); code != 0 {
		t.Fatal("second dump failed")
	}
	l1, l2 := dumpLines(t, d1), dumpLines(t, d2)
	if len(l1) != 4 || !slices.Equal(l1, l2) {
		t.Errorf("round trip lost something:\n%s\nvs\n%s", strings.Join(l1, "\n"), strings.Join(l2, "\n"))
	}
	joined := strings.Join(l1, "\n")
	for _, want := range []string{`"refetchableFromDate":"4102444800"`, `"key":"custom"`, `"crawlID":"c2"`, `"values":["v1","v2"]`, `"url":"http://a.test/done"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("dump lacks %s:\n%s", want, joined)
		}
	}
	// Delete and purge.
	if out, code := frontierCmd(t, addr, "delete-queue", "--key", "custom", "--crawl", "c2"); code != 0 || out != "1 URLs removed\n" {
		t.Errorf("delete-queue = %d %q", code, out)
	}
	if out, code := frontierCmd(t, addr, "--crawl", "c2", "delete-crawl"); code != 0 || out != "1 URLs removed\n" {
		t.Errorf("delete-crawl = %d %q", code, out)
	}
	if out, code := frontierCmd(t, addr, "purge", "--days", "0"); code != 0 || out != "2 URLs purged\n" {
		t.Errorf("purge = %d %q", code, out)
	}
}

// dumpLines returns the URLItems of a dump, without their creation date
// (a re-import resets it), in protobuf JSON, sorted.
func dumpLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		it := &pb.URLItem{}
		if err := protojson.Unmarshal([]byte(line), it); err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		it.CreationDate = 0
		j, err := protojson.MarshalOptions{}.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.ReplaceAll(string(j), " ", ""))
	}
	sort.Strings(out)
	return out
}
