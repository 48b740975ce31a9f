package htmlenc

import (
	"strings"
	"testing"
)

func TestDetermine(t *testing.T) {
	pad := "<!-- " + strings.Repeat("x", 1100) + " -->"
	for _, tc := range []struct {
		name, page, contentType, want string
	}{
		{"ascii only", "<p>hello</p>", "", "windows-1252"},
		{"ascii only past the first kilobyte", pad + "<p>hello</p>", "", "windows-1252"},
		{"meta names utf-8", `<meta charset="utf-8">` + pad + "<p>café</p>", "", "utf-8"},
		{"meta names windows-1252, ascii", `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`, "", "windows-1252"},
		{"utf-8 in the first kilobyte", "<p>café</p>", "", "utf-8"},
		{"utf-8 past the first kilobyte", pad + "<p>café</p>", "", "utf-8"},
		{"latin-1 past the first kilobyte", pad + "<p>caf\xe9</p>", "", "windows-1252"},
		{"header names latin-1", pad + "<p>café</p>", "text/html; charset=iso-8859-1", "windows-1252"},
		{"meta names latin-1", `<meta charset="iso-8859-1">` + pad + "<p>café</p>", "", "windows-1252"},
		{"header names shift_jis", "<p>x</p>", "text/html; charset=shift_jis", "shift_jis"},
		{"utf-16 byte order mark", "\xff\xfe<\x00p\x00>\x00", "", "utf-16le"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := Determine([]byte(tc.page), tc.contentType); got != tc.want {
				t.Errorf("Determine = %q, want %q", got, tc.want)
			}
		})
	}
}
