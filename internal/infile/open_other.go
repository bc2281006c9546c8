//go:build !unix

package infile

// openFlags is 0 where there is no O_NONBLOCK; Check before the open still
// refuses what is not a regular file.
const openFlags = 0
