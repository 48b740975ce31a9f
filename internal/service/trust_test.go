package service

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// curl calls the API with curl and returns the status line's code, the
// reservation header and the body.
func (f *fixture) curl(args ...string) (code, reservation, body string) {
	f.t.Helper()
	bin, err := exec.LookPath("curl")
	if err != nil {
		f.t.Fatalf("curl not found (run scripts/install-test-deps): %v", err)
	}
	hf := f.t.TempDir() + "/h"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-s", "-D", hf, "-w", "\n%{http_code}"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("curl %v: %v", args, err)
	}
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(s, '\n')
	head, _ := os.ReadFile(hf)
	for _, line := range strings.Split(string(head), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, HeaderReservation) {
			reservation = strings.TrimSpace(v)
		}
	}
	return s[i+1:], reservation, s[:max(i, 0)]
}

// backoff is the gate's backoff for the origin's key.
func (f *fixture) backoff() time.Duration {
	f.t.Helper()
	u, _ := url.Parse(f.origin.URL + "/")
	key, err := f.gate.Config().KeyFunc(context.Background(), u)
	if err != nil {
		f.t.Fatal(err)
	}
	st, err := f.gate.Status(context.Background(), key, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Delays.Backoff
}

// TestTrustModel: clients of the services cannot steer each other. A
// reservation is ended only with its token or the admin token; a
// reported 503 puts the host into backoff only from a client allowed to
// report; /trace and /delays need the admin token unless opened. Through
// curl, as a crawler would call them.
func TestTrustModel(t *testing.T) {
	f := newFixture(t, -1)
	f.warm(0)
	api, h := f.api.URL, f.origin.URL
	reserve := func() string {
		t.Helper()
		code, tok, body := f.curl("-X", "POST", "--data", `["`+h+`/a"]`, api+"/politeness?reserve=true")
		if code != "200" || !strings.Contains(body, h+"/a") || tok == "" {
			t.Fatalf("reserve: %s %q %s", code, tok, body)
		}
		return tok
	}
	held := func() bool {
		_, _, body := f.curl("-X", "POST", "--data", `["`+h+`/b"]`, api+"/politeness")
		return strings.TrimSpace(body) == "[]"
	}
	done503 := `[{"url":"` + h + `/a","status":503}]`

	tok := reserve()
	// Another client, without the token, cannot end it nor report.
	if _, _, body := f.curl("-X", "POST", "--data", done503, api+"/politeness/done"); strings.TrimSpace(body) != `{"ended":0,"refused":1}` {
		t.Errorf("done without the token: %s", body)
	}
	if _, _, body := f.curl("-X", "POST", "-H", HeaderReservation+": "+newReservationToken(), "--data", done503, api+"/politeness/done"); strings.TrimSpace(body) != `{"ended":0,"refused":1}` {
		t.Errorf("done with another token: %s", body)
	}
	if !held() {
		t.Error("the reservation was ended by a client without its token")
	}
	if b := f.backoff(); b != 0 {
		t.Errorf("backoff %v after reports without the token", b)
	}
	// The holder ends it; its 503 is not believed (not a reporter).
	if _, _, body := f.curl("-X", "POST", "-H", HeaderReservation+": "+tok, "--data", done503, api+"/politeness/done"); strings.TrimSpace(body) != `{"ended":1,"ignored":1}` {
		t.Errorf("holder's done: %s", body)
	}
	if b := f.backoff(); b != 0 {
		t.Errorf("backoff %v from a client not allowed to report", b)
	}

	// The admin token ends anyone's reservation and is believed.
	reserve()
	if _, _, body := f.curl("-X", "POST", "-H", "Authorization: Bearer "+token, "--data", done503, api+"/politeness/done"); strings.TrimSpace(body) != `{"ended":1}` {
		t.Errorf("admin's done: %s", body)
	}
	if b := f.backoff(); b <= 0 {
		t.Errorf("backoff %v after the admin's 503, want > 0", b)
	}

	// Monitoring of other clients' traffic is the admin's.
	for _, path := range []string{"/trace", "/delays"} {
		if code, _, _ := f.curl(api + path); code != "401" {
			t.Errorf("%s without the token: %s", path, code)
		}
		if code, _, _ := f.curl("-H", "X-Courtesy-Token: "+token, api+path); code != "200" {
			t.Errorf("%s with the token: %s", path, code)
		}
	}
	if err := f.svc.SetTrust(nil, true); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := f.curl(api + "/trace"); code != "200" {
		t.Errorf("/trace with public-monitoring: %s", code)
	}
	if err := f.svc.SetTrust([]string{"not-an-address"}, false); err == nil {
		t.Error("SetTrust took a bad address")
	}

	// A client in report-clients is believed with its own token.
	f = newFixture(t, -1)
	f.warm(0)
	api, h = f.api.URL, f.origin.URL
	if err := f.svc.SetTrust([]string{"127.0.0.1/32"}, false); err != nil {
		t.Fatal(err)
	}
	tok = reserve()
	if _, _, body := f.curl("-X", "POST", "--data", `[{"url":"`+h+`/a","status":503,"reservation":"`+tok+`"}]`, api+"/politeness/done"); strings.TrimSpace(body) != `{"ended":1}` {
		t.Errorf("reporter's done: %s", body)
	}
	if b := f.backoff(); b <= 0 {
		t.Errorf("backoff %v after a reporter's 503, want > 0", b)
	}
}
