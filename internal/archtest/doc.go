// Package archtest holds only a test: it checks that the module's packages import
// one another as DESIGN.md's table of folders allows (arrows point down only).
package archtest
