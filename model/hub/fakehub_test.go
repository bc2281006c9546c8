package hub

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake Hugging Face hub for tests: the resolve endpoint with the headers the
// real hub sends (X-Repo-Commit, ETag, X-Linked-Etag, X-Linked-Size,
// X-Error-Code), LFS files redirected with 302 to a second server, the "CDN",
// which serves Range requests. The CDN is addressed as "localhost" and the hub as
// "127.0.0.1", so they are different hosts to an HTTP client.

type fakeFile struct {
	data []byte
	lfs  bool
	tag  string // when set, the ETag the hub sends (X-Linked-Etag for LFS) instead of the content's
}

// etag is what the hub names a file by: sha256 for LFS files, the git blob
// sha1 otherwise (or tag when set).
func (f fakeFile) etag() string {
	if f.tag != "" {
		return f.tag
	}
	if f.lfs {
		s := sha256.Sum256(f.data)
		return hex.EncodeToString(s[:])
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(f.data))
	h.Write(f.data)
	return hex.EncodeToString(h.Sum(nil))
}

type fakeRepo struct {
	refs    map[string]string              // branch or tag -> commit
	commits map[string]map[string]fakeFile // commit -> file -> content
	gated   bool                           // requires "Bearer " + fakeToken
}

const fakeToken = "hf_test_token"

// request is one request either server saw.
type request struct {
	server, method, path, rng, auth string
}

type fakeHub struct {
	hub, cdn *httptest.Server
	cdnBase  string // http://localhost:PORT

	mu      sync.Mutex
	repos   map[string]*fakeRepo
	renamed map[string]string // old repo id -> new one (relative redirect)
	reqs    []request
	// corrupt makes the CDN serve content that does not match the etag.
	corrupt bool
	// abortAfter > 0 makes the next CDN GET send that many bytes and drop the
	// connection.
	abortAfter int
	// getRedirect, when set, makes the hub answer a GET (not a HEAD) of a
	// non-LFS file with a redirect to getRedirect + the request's path.
	getRedirect string
	// corruptSmall makes the hub serve non-LFS files with a byte changed
	// (their ETag stays that of the real content).
	corruptSmall bool
	// cdnDelay holds every CDN GET this long before it is answered.
	cdnDelay time.Duration
	// noLinkedSize makes the hub leave out X-Linked-Size.
	noLinkedSize bool
	// cdnChunked makes the CDN answer a GET without Content-Length (chunked),
	// and cdnJunk makes it go on sending junk after the content until the
	// client goes away (or 64 MiB have gone).
	cdnChunked, cdnJunk bool
	// cdnStallAfter > 0 makes CDN GETs send that many bytes and then nothing
	// until the client goes away.
	cdnStallAfter int
	// hubBusy and cdnBusy > 0 make the hub answer its next hubBusy requests
	// with 429 and the CDN its next cdnBusy with 503, sending Retry-After
	// retryAfter when it is not empty.
	hubBusy, cdnBusy int
	retryAfter       string
	// busyAnswers counts the 429 and 503 answers sent.
	busyAnswers int
	// cdnFail makes the CDN answer a GET of the LFS file with that etag
	// with that status.
	cdnFail map[string]int
}

// busy answers the request with 429 (hub) or 503 (CDN) while f.hubBusy or
// f.cdnBusy say so, and reports whether it did.
func (f *fakeHub) busy(server string, w http.ResponseWriter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, status := &f.hubBusy, http.StatusTooManyRequests
	if server == "cdn" {
		n, status = &f.cdnBusy, http.StatusServiceUnavailable
	}
	if *n <= 0 {
		return false
	}
	*n--
	f.busyAnswers++
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	http.Error(w, "slow down", status)
	return true
}

func newFakeHub(t *testing.T) *fakeHub {
	f := &fakeHub{repos: map[string]*fakeRepo{}, renamed: map[string]string{}}
	f.hub = httptest.NewServer(http.HandlerFunc(f.serveHub))
	f.cdn = httptest.NewServer(http.HandlerFunc(f.serveCDN))
	t.Cleanup(f.hub.Close)
	t.Cleanup(f.cdn.Close)
	f.cdnBase = strings.Replace(f.cdn.URL, "127.0.0.1", "localhost", 1)
	return f
}

func (f *fakeHub) addRepo(id string, r *fakeRepo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repos[id] = r
}

func (f *fakeHub) record(server string, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, request{server, r.Method, r.URL.EscapedPath(), r.Header.Get("Range"), r.Header.Get("Authorization")})
}

// requests returns what both servers saw so far.
func (f *fakeHub) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

func hubError(w http.ResponseWriter, code int, errCode string) {
	w.Header().Set("X-Error-Code", errCode)
	w.Header().Set("X-Error-Message", errCode)
	w.WriteHeader(code)
}

func (f *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	f.record("hub", r)
	if f.busy("hub", w) {
		return
	}
	p := r.URL.EscapedPath()
	i := strings.Index(p, "/resolve/")
	if i < 1 {
		http.NotFound(w, r)
		return
	}
	repoID := p[1:i]
	revEsc, fileEsc, _ := strings.Cut(p[i+len("/resolve/"):], "/")
	rev, err1 := url.PathUnescape(revEsc)
	file, err2 := url.PathUnescape(fileEsc)
	if err1 != nil || err2 != nil {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	newID, renamed := f.renamed[repoID]
	repo := f.repos[repoID]
	f.mu.Unlock()
	if renamed {
		// Relative, as the hub does for renamed repos.
		http.Redirect(w, r, "/"+newID+"/resolve/"+revEsc+"/"+fileEsc, http.StatusTemporaryRedirect)
		return
	}
	if repo == nil {
		hubError(w, http.StatusUnauthorized, "RepoNotFound")
		return
	}
	if repo.gated && r.Header.Get("Authorization") != "Bearer "+fakeToken {
		hubError(w, http.StatusUnauthorized, "GatedRepo")
		return
	}
	commit, ok := repo.refs[rev]
	if !ok {
		commit = rev
	}
	files, ok := repo.commits[commit]
	if !ok {
		hubError(w, http.StatusNotFound, "RevisionNotFound")
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	ff, ok := files[file]
	if !ok {
		hubError(w, http.StatusNotFound, "EntryNotFound")
		return
	}
	if ff.lfs {
		w.Header().Set("X-Linked-Etag", `"`+ff.etag()+`"`)
		f.mu.Lock()
		noSize := f.noLinkedSize
		f.mu.Unlock()
		if !noSize {
			w.Header().Set("X-Linked-Size", strconv.Itoa(len(ff.data)))
		}
		w.Header().Set("ETag", `"pointer-file-etag"`)
		http.Redirect(w, r, f.cdnBase+"/repos/"+ff.etag(), http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+ff.etag()+`"`)
	f.mu.Lock()
	target, corruptSmall := f.getRedirect, f.corruptSmall
	f.mu.Unlock()
	data := ff.data
	if corruptSmall && len(data) > 0 {
		data = append([]byte(nil), data...)
		data[0] ^= 0x20
	}
	if target != "" && r.Method == http.MethodGet {
		http.Redirect(w, r, target+r.URL.EscapedPath(), http.StatusFound)
		return
	}
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(data))
}

func (f *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	f.record("cdn", r)
	if f.busy("cdn", w) {
		return
	}
	want := strings.TrimPrefix(r.URL.Path, "/repos/")
	f.mu.Lock()
	var data []byte
	for _, repo := range f.repos {
		for _, files := range repo.commits {
			for _, ff := range files {
				if ff.lfs && ff.etag() == want {
					data = ff.data
				}
			}
		}
	}
	failStatus := f.cdnFail[want]
	corrupt, abort, delay := f.corrupt, f.abortAfter, f.cdnDelay
	chunked, junk, stallAfter := f.cdnChunked, f.cdnJunk, f.cdnStallAfter
	if r.Method == http.MethodGet {
		f.abortAfter = 0
	}
	f.mu.Unlock()
	if data == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodGet {
		time.Sleep(delay)
		if failStatus != 0 {
			http.Error(w, "failed", failStatus)
			return
		}
	}
	if corrupt {
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 0x55
	}
	if abort > 0 && r.Method == http.MethodGet {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:abort])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	if stallAfter > 0 && r.Method == http.MethodGet {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:stallAfter])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if chunked && r.Method == http.MethodGet {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers out: no Content-Length
		w.Write(data)
		w.(http.Flusher).Flush()
		junkBuf := bytes.Repeat([]byte{0xee}, 32<<10)
		for sent := 0; junk && sent < 64<<20 && r.Context().Err() == nil; sent += len(junkBuf) {
			if _, err := w.Write(junkBuf); err != nil {
				return
			}
		}
		return
	}
	http.ServeContent(w, r, "blob", time.Time{}, bytes.NewReader(data))
}
