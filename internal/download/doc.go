// Package download fetches a URL into a file, resumably (HTTP Range onto a
// ".incomplete" file), with progress callbacks and an optional sha256 check, and
// moves the file into place only when it is complete. It is the one HTTP client
// of the module, shared by the model hub client and the corpus fetcher.
package download
