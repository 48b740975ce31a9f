package politeness_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

func TestAdminDelays(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t, serve(200, "User-agent: *\nCrawl-delay: 5\n"))
	c := newClock()
	g := newGate(t, politeness.Config{Delays: []politeness.DelayRule{
		{Key: "file.example", Delay: 4 * time.Second},
		{Key: "both.example", Delay: 9 * time.Second},
	}}, politeness.Backend{Now: c.Now})
	tryRefused(t, g, o.url("/")) // fetches robots.txt: robots delay 5s recorded

	if err := g.SetDelay(ctx, "both.example", 2*time.Second, false); err != nil {
		t.Fatal(err)
	}
	if err := g.SetDelay(ctx, "over.example", 100*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	list, err := g.ListDelays(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		o.key() + " manual=false robots=5s current=5s",
		"both.example manual=true 2s file=false current=2s",
		"file.example manual=true 4s file=true current=4s",
		"over.example manual=true 100ms override current=100ms",
	}
	if got := describe(list); got != strings.Join(want, "\n") {
		t.Fatalf("ListDelays =\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// Paging: after and limit, file rules merged in order.
	page, err := g.ListDelays(ctx, "both.example", 1)
	if err != nil || len(page) != 1 || page[0].Key != "file.example" {
		t.Fatalf("page after both.example = %+v, %v", page, err)
	}
	// Deleting the admin delay brings the file's back.
	if err := g.DeleteDelay(ctx, "both.example"); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteDelay(ctx, "never.example"); err != nil {
		t.Fatalf("DeleteDelay of an unknown key: %v", err)
	}
	// Deleting the manual delay of a key with a robots delay keeps the
	// robots record.
	if err := g.SetDelay(ctx, o.key(), 7*time.Second, false); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteDelay(ctx, o.key()); err != nil {
		t.Fatal(err)
	}
	list, err = g.ListDelays(ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		o.key() + " manual=false robots=5s current=5s",
		"both.example manual=true 9s file=true current=9s",
	}
	if got := describe(list); got != strings.Join(want, "\n") {
		t.Fatalf("after deletes:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// The default delay: the file layer, then the admin layer over it.
	if err := g.SetConfigDefaultDelay(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d, err := g.DefaultDelay(ctx); err != nil || d != 2*time.Second {
		t.Fatalf("DefaultDelay after a file change = %v, %v; want 2s", d, err)
	}
	if err := g.SetDefaultDelay(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := g.SetConfigDefaultDelay(4 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d, err := g.DefaultDelay(ctx); err != nil || d != 3*time.Second {
		t.Fatalf("DefaultDelay = %v, %v; want the admin's 3s over the file's 4s", d, err)
	}
	if err := g.SetConfigDefaultDelay(-time.Second); err == nil {
		t.Error("negative file default accepted")
	}
}

func describe(list []politeness.DelayInfo) string {
	var lines []string
	for _, i := range list {
		s := fmt.Sprintf("%s manual=%v", i.Key, i.HasManual)
		if i.HasManual {
			s += " " + i.Manual.String()
			if i.Override {
				s += " override"
			} else {
				s += fmt.Sprintf(" file=%v", i.FromFile)
			}
		}
		if i.Robots > 0 {
			s += " robots=" + i.Robots.String()
		}
		s += " current=" + i.Current.String()
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func TestAdminBadInput(t *testing.T) {
	ctx := context.Background()
	g := newGate(t, politeness.Config{}, politeness.Backend{})
	cases := []struct {
		name string
		err  error
	}{
		{"empty key", g.SetDelay(ctx, "", time.Second, false)},
		{"default key", g.SetDelay(ctx, politeness.DefaultDelayKey, time.Second, false)},
		{"space in key", g.SetDelay(ctx, "a b", time.Second, false)},
		{"URL as key", g.SetDelay(ctx, "http://a.example/", time.Second, false)},
		{"path in key", g.SetDelay(ctx, "a.example/x", time.Second, false)},
		{"userinfo in key", g.SetDelay(ctx, "u@a.example", time.Second, false)},
		{"negative delay", g.SetDelay(ctx, "a.example", -time.Second, false)},
		{"huge delay", g.SetDelay(ctx, "a.example", 25*time.Hour, false)},
		{"huge default", g.SetDefaultDelay(ctx, 25*time.Hour)},
		{"delete empty key", g.DeleteDelay(ctx, "")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || !strings.HasPrefix(tc.err.Error(), "politeness: ") {
				t.Fatalf("err = %v, want a politeness error", tc.err)
			}
		})
	}
	// A URL-like key stored before keys were vetted can still be deleted.
	if err := g.DeleteDelay(ctx, "http://a.example/"); err != nil {
		t.Errorf("delete of a URL-like key: %v", err)
	}
	if _, err := g.Status(ctx, "http://a.example/", ""); err == nil {
		t.Error("Status of a URL-like key: no error")
	}
}

func TestAdminDelayTakesEffect(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "")
	ctx := context.Background()
	p := tryGranted(t, f.g, "http://h.example/")
	_ = p.Done(politeness.Outcome{Status: 200})
	if err := f.g.SetDelay(ctx, "h.example", 10*time.Second, false); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.RetryAfter != 10*time.Second {
		t.Fatalf("after SetDelay: %+v, want 10s at once", d)
	}
	if err := f.g.DeleteDelay(ctx, "h.example"); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.RetryAfter != time.Second {
		t.Fatalf("after DeleteDelay: %+v, want the 1s default", d)
	}
	if err := f.g.SetDefaultDelay(ctx, 0); err != nil {
		t.Fatal(err)
	}
	tryGranted(t, f.g, "http://h.example/")
}
