// Package archtest holds only a test: it checks every package's imports against
// one table, DESIGN.md's house rules written out package by package (arrows
// point down only; a folder's rule does not cover its subfolders, so model may
// not import model/hub; outside modules are listed per package). A new package
// or a new dependency fails the test until the table says it is allowed.
package archtest
