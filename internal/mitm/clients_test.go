package mitm

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Real clients (curl, Python's ssl with OpenSSL) trusting the CA through
// its PEM file, as docs/mitm.md tells users to. The server is ServeConn on
// accepted loopback connections; no proxy is involved.

// lookTool finds a client program; scripts/install-test-deps installs them.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (run scripts/install-test-deps): %v", name, err)
	}
	return p
}

func runTool(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

func TestCurlTrustsCA(t *testing.T) {
	t.Parallel()
	curl := lookTool(t, "curl")
	ca, dir := newTestCA(t, Options{})
	wrong, wrongDir := newTestCA(t, Options{})
	_ = wrong
	ts := startServer(t, &Server{CA: ca}, "", echo)
	port := strconv.Itoa(ts.port)
	url := "https://site.test:" + port + "/curl/path?x=1"
	resolve := "site.test:" + port + ":127.0.0.1"

	tests := []struct {
		name     string
		cacert   string
		wantExit int // 0, or curl's 60 (peer certificate cannot be authenticated)
	}{
		{"trusted", dir + "/" + CertFile, 0},
		{"wrong CA", wrongDir + "/" + CertFile, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runTool(t, curl, "--silent", "--show-error", "--max-time", "20",
				"--cacert", tt.cacert, "--resolve", resolve, url)
			var ee *exec.ExitError
			switch {
			case tt.wantExit == 0 && err != nil:
				t.Fatalf("curl: %v\n%s", err, out)
			case tt.wantExit != 0 && (!errors.As(err, &ee) || ee.ExitCode() != tt.wantExit):
				t.Fatalf("curl: %v, want exit %d\n%s", err, tt.wantExit, out)
			case tt.wantExit == 0:
				for _, want := range []string{"hello from mitm", "url=" + url, "tls=true"} {
					if !strings.Contains(out, want) {
						t.Errorf("body lacks %q:\n%s", want, out)
					}
				}
			}
		})
	}
}

// pyClient fetches url's path from 127.0.0.1:port with SNI and
// verification as "site.test", trusting only cafile.
const pyClient = `
import http.client, socket, ssl, sys
cafile, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=cafile)
class Conn(http.client.HTTPSConnection):
    def connect(self):
        sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.sock = self._context.wrap_socket(sock, server_hostname="site.test")
c = Conn("site.test", port, context=ctx, timeout=20)
try:
    c.request("GET", path)
    r = c.getresponse()
except ssl.SSLCertVerificationError as e:
    print("VERIFY-FAILED", e)
    sys.exit(3)
print(r.status)
print(r.read().decode())
`

func TestPythonTrustsCA(t *testing.T) {
	t.Parallel()
	py := lookTool(t, "python3")
	ca, dir := newTestCA(t, Options{})
	_, wrongDir := newTestCA(t, Options{})
	ts := startServer(t, &Server{CA: ca}, "", echo)
	port := strconv.Itoa(ts.port)

	out, err := runTool(t, py, "-c", pyClient, dir+"/"+CertFile, port, "/py?y=2")
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for _, want := range []string{"200", "hello from mitm", "url=https://site.test:" + port + "/py?y=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, err = runTool(t, py, "-c", pyClient, wrongDir+"/"+CertFile, port, "/py")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(out, "VERIFY-FAILED") {
		t.Errorf("python with the wrong CA: %v, want a verification failure\n%s", err, out)
	}
}
