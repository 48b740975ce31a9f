// Package layering holds no code: its test checks the rules of which
// project package may import which (docs/architecture.md, "Import
// rules"), so that the shape of the system does not drift.
package layering
