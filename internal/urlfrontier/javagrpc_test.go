package urlfrontier

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// debianJava is where Debian's Java packages put their jars.
const debianJava = "/usr/share/java"

// javaRuntimeJars are the jars a grpc-java client with the Netty transport
// runs with, from Debian's libgrpc-java, libprotobuf-java, libguava-java,
// libperfmark-java and libnetty-java.
var javaRuntimeJars = []string{
	"grpc-api", "grpc-core", "grpc-stub", "grpc-protobuf", "grpc-protobuf-lite", "grpc-context", "grpc-netty",
	"protobuf", "guava", "perfmark-api",
	"netty-common", "netty-buffer", "netty-transport", "netty-codec", "netty-codec-http", "netty-codec-http2",
	"netty-handler", "netty-resolver",
}

// javaCompileJar holds javax.annotation.Generated, which grpc-java 1.41's
// generated stubs carry (libgeronimo-annotation-1.3-spec-java).
const javaCompileJar = "geronimo-annotation-1.3-spec"

// javaPackages is what scripts/install-test-deps installs for this test.
const javaPackages = "default-jdk-headless, libgrpc-java, libprotobuf-java, protobuf-compiler-grpc-java-plugin, libnetty-java, libperfmark-java, libguava-java, libgeronimo-annotation-1.3-spec-java"

// TestJavaGRPCClient drives the service from Java: stubs that Debian's
// protoc and grpc-java plugin generate here from urlfrontier.proto,
// compiled with javac and run on Debian's grpc-java with its Netty
// transport (tools/javagrpc/Client.java), the stack StormCrawler's
// urlfrontier module and the reference client are built on. It runs a
// spout's round trip (PutURLs, GetURLs, the acknowledgements as known
// items) and the admin calls.
func TestJavaGRPCClient(t *testing.T) {
	root := repoRoot(t)
	tools := map[string]string{}
	for _, name := range []string{"java", "javac", "protoc", "grpc_java_plugin"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s not found (%v): run scripts/install-test-deps (%s)", name, err, javaPackages)
		}
		tools[name] = p
	}
	var cp []string
	for _, j := range javaRuntimeJars {
		p := filepath.Join(debianJava, j+".jar")
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s missing (%v): run scripts/install-test-deps (%s)", p, err, javaPackages)
		}
		cp = append(cp, p)
	}
	annotations := filepath.Join(debianJava, javaCompileJar+".jar")
	if _, err := os.Stat(annotations); err != nil {
		t.Fatalf("%s missing (%v): run scripts/install-test-deps (%s)", annotations, err, javaPackages)
	}

	dir := t.TempDir()
	gen, classes := filepath.Join(dir, "gen"), filepath.Join(dir, "classes")
	for _, d := range []string{gen, classes} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(timeout time.Duration, name string, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, tools[name], args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", name, err, out, stderr.String())
		}
		return out
	}
	run(time.Minute, "protoc", "--plugin=protoc-gen-grpc-java="+tools["grpc_java_plugin"],
		"--java_out="+gen, "--grpc-java_out="+gen,
		"-I", filepath.Join(root, "internal", "urlfrontier", "urlfrontierpb"), "urlfrontier.proto")
	sources := []string{filepath.Join(root, "tools", "javagrpc", "Client.java")}
	err := filepath.WalkDir(gen, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			sources = append(sources, p)
		}
		return err
	})
	if err != nil || len(sources) != 3 {
		t.Fatalf("generated sources %v, %v; want Urlfrontier.java and URLFrontierGrpc.java", sources, err)
	}
	start := time.Now()
	run(3*time.Minute, "javac", append([]string{"-nowarn", "-d", classes,
		"-cp", strings.Join(append(cp, annotations), string(os.PathListSeparator))}, sources...)...)
	t.Logf("javac ran in %v", time.Since(start).Round(time.Millisecond))

	addr := serveLoopback(t).Addr().String()
	now := time.Now().Unix()
	out := run(time.Minute, "java", "-cp", strings.Join(append([]string{classes}, cp...), string(os.PathListSeparator)),
		"Client", addr, fmt.Sprint(now))
	got := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("client line %q", sc.Text())
		}
		got[name] = append(got[name], value)
	}
	checkJavaResult(t, got, now)
	if t.Failed() {
		t.Logf("client output:\n%s", out)
	}
}

// checkJavaResult checks what tools/javagrpc/Client.java printed.
func checkJavaResult(t *testing.T, got map[string][]string, now int64) {
	t.Helper()
	one := func(name string) string {
		if len(got[name]) != 1 {
			t.Errorf("%s: %q, want one line", name, got[name])
			return ""
		}
		return got[name][0]
	}
	sameSet := func(name string, want ...string) {
		have := map[string]bool{}
		for _, v := range got[name] {
			have[v] = true
		}
		if len(got[name]) != len(want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
			return
		}
		for _, w := range want {
			if !have[w] {
				t.Errorf("%s: %q, want %q", name, got[name], want)
				return
			}
		}
	}
	sameSet("put", "d1 OK", "d2 OK", "dup SKIPPED", "http://java.test/done OK", "bad SKIPPED", "c2 OK")
	sameSet("get", "http://java.test/1 java.test DEFAULT java", "http://java.test/2 java.test DEFAULT ")
	sameSet("ack", "ack1 OK", "ack2 OK")
	want := map[string]string{
		"provider":           "io.grpc.netty.NettyChannelProvider",
		"put.end":            "OK",
		"stats.put":          "DEFAULT size=2 inProcess=0 queues=1 completed=1 active_queues=1",
		"get.count":          "2",
		"stats.leased":       "DEFAULT size=2 inProcess=2 queues=1 completed=1 active_queues=1",
		"ack.end":            "OK",
		"stats.acked":        "DEFAULT size=1 inProcess=0 queues=1 completed=2 active_queues=1",
		"queues":             "java.test total=1 size=1 crawl=DEFAULT",
		"queues.javaCrawl":   "mykey",
		"batch":              "b1 SKIPPED,OK",
		"status":             fmt.Sprintf("java.test refetch=%d created=true", now+3600),
		"status.missing":     "NOT_FOUND",
		"status.done":        "0",
		"count.filter":       "4 hasFilter=true hasLocal=false",
		"list.count":         "4",
		"limit.unknown":      "NOT_FOUND",
		"delay":              "OK",
		"block":              "OK",
		"get.blocked.count":  "0",
		"get.inactive.count": "0",
		"inactive":           "OK",
		"active.off":         "false",
		"loglevel":           "OK",
		"nodes":              "",
		"crawls":             "DEFAULT,javaCrawl",
		"delete.queue":       "1",
		"delete.crawl":       "1",
		"crawls.after":       "DEFAULT",
	}
	for name, w := range want {
		if v := one(name); v != w {
			t.Errorf("%s = %q, want %q", name, v, w)
		}
	}
	for _, name := range []string{"get.blocked", "get.inactive"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s served %q", name, got[name])
		}
	}
}
