package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadSeeds(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantURLs  int
		wantHosts []string
		wantErr   bool
	}{
		{"urls and comments", "# seeds\nhttp://site-0000.test/\n\nhttp://SITE-0001.test:80/a\nhttp://site-0000.test/b\n", 3, []string{"site-0000.test", "site-0001.test"}, false},
		{"relative url", "site-0000.test/\n", 0, nil, true},
		{"empty", "# nothing\n", 0, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "seeds.txt")
			if err := os.WriteFile(name, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			urls, hosts, err := readSeeds(name)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(urls) != tc.wantURLs || len(hosts) != len(tc.wantHosts) {
				t.Errorf("got %d urls, hosts %v; want %d, %v", len(urls), hosts, tc.wantURLs, tc.wantHosts)
			}
			for _, h := range tc.wantHosts {
				if !hosts[h] {
					t.Errorf("host %s missing from %v", h, hosts)
				}
			}
		})
	}
}
