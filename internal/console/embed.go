package console

import "embed"

// staticFS is the UI: plain HTML, CSS and JavaScript served as they are
// (no build step), and uPlot under static/vendor/ with its licence.
//
//go:embed static
var staticFS embed.FS
