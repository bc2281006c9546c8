package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options tunes File. The zero value is usable.
type Options struct {
	// Header is sent with the request (for example Authorization).
	// Authorization and Cookie follow a redirect only to the same scheme, host
	// and port as the request (Go's client alone compares host names, so a
	// token would reach another port, or go from https to plain http).
	Header http.Header
	// SHA256 is the expected hex digest of the whole file; checked when not empty.
	SHA256 string
	// Progress, when set, is called as bytes arrive with the bytes on disk so far
	// (a resumed prefix included) and the full size, or -1 when the server does
	// not say.
	Progress func(done, total int64)
	// Client makes the requests; nil means a client with sane timeouts for
	// connecting and for response headers, and none on the body.
	Client *http.Client
}

// IncompleteSuffix is appended to dest for the partial file a download writes
// into; it is what a later call resumes from.
const IncompleteSuffix = ".incomplete"

// HTTPError is a response with a status that File cannot use.
type HTTPError struct {
	Method     string // "GET" when empty
	URL        string
	StatusCode int
	Status     string // as the server sent it, e.g. "404 Not Found"
	// ErrorCode and ErrorMessage are the X-Error-Code and X-Error-Message
	// headers, which the Hugging Face hub sets (e.g. "GatedRepo", "EntryNotFound").
	ErrorCode    string
	ErrorMessage string
}

// Error names the URL and the status and says what the status usually means.
func (e *HTTPError) Error() string {
	method := e.Method
	if method == "" {
		method = http.MethodGet
	}
	msg := fmt.Sprintf("%s %s: %s", method, e.URL, e.Status)
	if e.ErrorCode != "" {
		msg += " (" + e.ErrorCode + ")"
	}
	if e.ErrorMessage != "" {
		msg += ": " + e.ErrorMessage
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += ": access denied; the resource may be private or gated (for the Hugging Face hub, accept the " +
			"model's terms on its page and set HF_TOKEN to a token with access)"
	case http.StatusNotFound:
		msg += ": not found"
	}
	return msg
}

// NewHTTPError builds an HTTPError from a response to a request for url.
func NewHTTPError(url string, resp *http.Response) *HTTPError {
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode)
	}
	method := ""
	if resp.Request != nil {
		method = resp.Request.Method
	}
	return &HTTPError{
		Method:       method,
		URL:          url,
		StatusCode:   resp.StatusCode,
		Status:       status,
		ErrorCode:    resp.Header.Get("X-Error-Code"),
		ErrorMessage: resp.Header.Get("X-Error-Message"),
	}
}

// DefaultClient is the client File uses when Options.Client is nil: it follows
// redirects, gives up on connecting or on response headers after a minute, and
// never times out a body that keeps arriving.
var DefaultClient = &http.Client{Transport: defaultTransport()}

func defaultTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = time.Minute
	return t
}

// File downloads url into dest. It writes into dest+".incomplete", resuming a
// partial file left there by an earlier call with an HTTP Range request (a server
// that ignores Range is handled by starting over), checks the sha256 of the whole
// file when opt.SHA256 is set, and renames the file into place only when it is
// complete. Parent folders are created. When ctx is cancelled or the connection
// breaks, the partial file stays for a later call to resume (unless it is empty); on a checksum
// mismatch it is deleted. File always fetches: callers that cache check dest
// themselves. Two processes must not download to the same dest at once.
func File(ctx context.Context, url, dest string, opt Options) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	part := dest + IncompleteSuffix
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	d := &fetch{ctx: ctx, url: url, part: part, f: f, opt: opt}
	if opt.SHA256 != "" {
		d.h = sha256.New()
	}
	err = d.run()
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("download %s: close %s: %w", url, part, cerr)
	}
	if err != nil {
		if info, serr := os.Stat(part); serr == nil && info.Size() == 0 {
			os.Remove(part) // nothing to resume: leave no empty file behind
		}
		return err
	}
	if d.h != nil {
		got := hex.EncodeToString(d.h.Sum(nil))
		if !strings.EqualFold(got, opt.SHA256) {
			os.Remove(part)
			return fmt.Errorf("download %s: sha256 mismatch: got %s, want %s (the partial file was deleted)",
				url, got, strings.ToLower(opt.SHA256))
		}
	}
	if err := os.Rename(part, dest); err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	return nil
}

// fetch is one call of File.
type fetch struct {
	ctx  context.Context
	url  string
	part string
	f    *os.File
	opt  Options
	h    hash.Hash // nil when no checksum is wanted
}

// run brings the partial file to completion, hashing it into d.h.
func (d *fetch) run() error {
	info, err := d.f.Stat()
	if err != nil {
		return fmt.Errorf("download %s: %w", d.url, err)
	}
	offset := info.Size()
	// At most one restart from zero, when a range answer does not fit the
	// partial file (a 206 from another offset, or a 416 saying the remote file
	// is shorter than it).
	for attempt := 0; ; attempt++ {
		resp, err := d.get(offset)
		if err != nil {
			return err
		}
		done, total, restart, err := d.accept(resp, offset)
		if err != nil || restart {
			resp.Body.Close()
			if err != nil {
				return err
			}
			if attempt > 0 {
				return fmt.Errorf("download %s: server does not honour Range requests consistently", d.url)
			}
			offset = 0
			if err := d.f.Truncate(0); err != nil {
				return fmt.Errorf("download %s: %w", d.url, err)
			}
			continue
		}
		err = d.copy(resp, done, total)
		resp.Body.Close()
		return err
	}
}

// get sends the request, asking for the bytes from offset on.
func (d *fetch) get(offset int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", d.url, err)
	}
	for k, vs := range d.opt.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	// Byte offsets must refer to the stored representation, never a gzip of it.
	req.Header.Set("Accept-Encoding", "identity")
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	client := d.opt.Client
	if client == nil {
		client = DefaultClient
	}
	resp, err := withCredentialPolicy(client).Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", d.url, err)
	}
	return resp, nil
}

// accept looks at the response to a request from offset. It returns the bytes
// already on disk that the body continues (the hash then covers them), the total
// size or -1, and restart when the partial file must be dropped and the
// download begun again from zero.
func (d *fetch) accept(resp *http.Response, offset int64) (done, total int64, restart bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK:
		// The whole file, also when Range was ignored: copy starts over at 0.
		return 0, resp.ContentLength, false, nil
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			return 0, 0, true, nil
		}
		if err := d.hashPrefix(offset); err != nil {
			return 0, 0, false, err
		}
		return offset, size, false, nil
	case http.StatusRequestedRangeNotSatisfiable:
		// "bytes */SIZE": the partial file may be the whole file already.
		_, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if offset > 0 && ok && size == offset {
			if err := d.hashPrefix(offset); err != nil {
				return 0, 0, false, err
			}
			d.progress(offset, size)
			return offset, size, false, nil
		}
		if offset > 0 {
			return 0, 0, true, nil
		}
	}
	return 0, 0, false, NewHTTPError(d.url, resp)
}

// hashPrefix feeds the first n bytes of the partial file to the hash.
func (d *fetch) hashPrefix(n int64) error {
	if d.h == nil || n == 0 {
		return nil
	}
	if _, err := io.Copy(d.h, io.NewSectionReader(d.f, 0, n)); err != nil {
		return fmt.Errorf("download %s: read %s: %w", d.url, d.part, err)
	}
	return nil
}

func (d *fetch) progress(done, total int64) {
	if d.opt.Progress != nil {
		d.opt.Progress(done, total)
	}
}

// copy appends the body to the partial file from offset done. A 416 response
// (already complete) has nothing to copy.
func (d *fetch) copy(resp *http.Response, done, total int64) error {
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil
	}
	if err := d.f.Truncate(done); err != nil {
		return fmt.Errorf("download %s: %w", d.url, err)
	}
	if _, err := d.f.Seek(done, io.SeekStart); err != nil {
		return fmt.Errorf("download %s: %w", d.url, err)
	}
	d.progress(done, total)
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := d.f.Write(buf[:n]); err != nil {
				return fmt.Errorf("download %s: write %s: %w", d.url, d.part, err)
			}
			if d.h != nil {
				d.h.Write(buf[:n])
			}
			done += int64(n)
			d.progress(done, total)
		}
		// The transport may hold buffered data after a cancel: stop here anyway.
		if err := d.ctx.Err(); err != nil {
			return fmt.Errorf("download %s: interrupted after %d bytes (run again to resume): %w", d.url, done, err)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if cerr := d.ctx.Err(); cerr != nil {
				rerr = cerr
			}
			return fmt.Errorf("download %s: interrupted after %d bytes (run again to resume): %w", d.url, done, rerr)
		}
	}
	if total >= 0 && done != total {
		return fmt.Errorf("download %s: got %d of %d bytes (run again to resume)", d.url, done, total)
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("download %s: sync %s: %w", d.url, d.part, err)
	}
	return nil
}

// withCredentialPolicy returns a copy of c whose redirects drop the
// Authorization and Cookie headers unless every hop so far, and the next one,
// has the scheme, host and port of the first request. c's own CheckRedirect
// (or the default limit of 10 redirects) still applies.
func withCredentialPolicy(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		same := sameOrigin(req.URL, via[0].URL)
		for _, v := range via[1:] {
			same = same && sameOrigin(v.URL, via[0].URL)
		}
		if !same {
			req.Header.Del("Authorization")
			req.Header.Del("Cookie")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// sameOrigin reports whether a and b have the same scheme, host and port (a
// missing port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			return "443"
		case "http":
			return "80"
		}
		return ""
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// parseContentRange reads "bytes START-END/SIZE" or "bytes */SIZE"; START is
// -1 in the second form and SIZE -1 when it is "*".
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		v, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || v < 0 {
			return 0, 0, false
		}
		size = v
	}
	if rng == "*" {
		return -1, size, size >= 0
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	v, err := strconv.ParseInt(first, 10, 64)
	if err != nil || v < 0 {
		return 0, 0, false
	}
	return v, size, true
}

// IsNotFound reports whether err is an HTTP 404 from File.
func IsNotFound(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusNotFound
}
