// Package download fetches a URL into a file, resumably (HTTP Range onto a
// ".incomplete" file), with progress callbacks and an optional sha256 check, and
// moves the file into place only when it is complete. It reads no more than the
// size announced, gives up on a body that stalls, and retries answers 429 and
// 503 after the Retry-After they send. It is the one HTTP client of the module,
// shared by the model hub client and the corpus fetcher.
package download
