// Package download fetches a URL into a file, resumably (HTTP Range onto a
// ".incomplete" file), with progress callbacks and an optional sha256 check, and
// moves the file into place only when it is complete and checked. It reads no
// more than the size announced, gives up on a body that stalls, asks again from
// where a body broke off, retries answers 429, 502, 503 and 504 after the
// Retry-After they send (else with backoff), and refuses a file the free space
// cannot hold before its first byte. It is the one HTTP client of the module,
// shared by the model hub client and the corpus fetcher.
package download
