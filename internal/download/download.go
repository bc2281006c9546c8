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
	// Client makes the requests; nil means DefaultClient, whose timeouts are for
	// connecting and for response headers (File times out stalled bodies itself:
	// see StallTimeout).
	Client *http.Client
	// Size, when positive, is the size of the whole file as announced
	// beforehand (by a HEAD, say): a response that announces another size is
	// refused, and no more than Size bytes are read.
	Size int64
	// MaxSize caps a download whose size nothing announces (no Size, and a
	// response with neither Content-Length nor a Content-Range size): 0 means
	// DefaultMaxSize, and a negative value refuses such a response. A response
	// that announces its size is read up to that size and no further.
	MaxSize int64
	// StallTimeout ends a download whose body stalls: when less than
	// StallMinBytes arrive in that long (nothing at all, or a trickle). The
	// partial file is kept for a later call to resume. 0 means
	// DefaultStallTimeout, a negative value no limit.
	StallTimeout time.Duration
	// Retry says how requests answered 429, 502, 503 or 504 are retried.
	Retry Retry
	// Verify, when set, checks the complete file at path (the partial one,
	// before it is renamed into place) as SHA256 does: an error deletes the
	// file and is returned, so that no unchecked file is ever at dest.
	Verify func(path string) error
	// Reconnects is how often, within one call, a body that breaks off (the
	// connection drops, or ends before the size announced) is asked for
	// again from where it broke, as huggingface_hub does: at once after a
	// try that brought at least StallMinBytes, which also starts the count
	// anew, else after a second. 0 means DefaultReconnects, a negative value
	// none (the partial file then waits for the next call). Stalls and
	// cancellations are not retried.
	Reconnects int
	// SpaceHint is added to the error of a download refused for want of
	// free space (ErrNoSpace): where else the file could go, say.
	SpaceHint string
}

// DefaultReconnects is Options.Reconnects when it is zero.
const DefaultReconnects = 5

// brokenBody is a body that broke off after done bytes of the whole file
// were on disk: what a reconnect resumes.
type brokenBody struct {
	done int64
	err  error
}

func (e *brokenBody) Error() string { return e.err.Error() }
func (e *brokenBody) Unwrap() error { return e.err }

// DefaultMaxSize is Options.MaxSize when it is zero: the most bytes read of a
// file whose size is announced nowhere.
const DefaultMaxSize = 1 << 30

// DefaultStallTimeout is Options.StallTimeout when it is zero.
const DefaultStallTimeout = time.Minute

// StallMinBytes is the least a body must deliver every Options.StallTimeout.
const StallMinBytes = 1 << 10

// ErrStalled is wrapped by the error File returns when a body stops arriving
// for Options.StallTimeout.
var ErrStalled = errors.New("stalled")

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
	// RetryAfter is the Retry-After header (sent with 429 and 503), as sent.
	RetryAfter string
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
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		msg += ": the server is rate-limiting or busy"
		if e.RetryAfter != "" {
			after := e.RetryAfter
			if _, err := strconv.ParseUint(after, 10, 64); err == nil {
				after += " s"
			}
			msg += " and asks to retry after " + after
		}
		msg += "; try again later"
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		msg += ": a proxy or CDN on the way failed to reach the server; try again later"
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
		RetryAfter:   resp.Header.Get("Retry-After"),
	}
}

// DefaultClient is the client File uses when Options.Client is nil: it follows
// redirects, gives up on connecting or on response headers after a minute, and
// never times out a body that keeps arriving (File gives up on one that stops:
// Options.StallTimeout).
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
// file when opt.SHA256 is set (and the file by opt.Verify when set), and renames
// the file into place only when it is complete and checked; a resumed file
// that fails the check is fetched once more from its start in the same call
// (the prefix an earlier call left may be what was wrong). Parent folders are created. It reads no more than the size
// announced (opt.Size, Content-Length or Content-Range; opt.MaxSize when none
// is), retries answers 429, 502, 503 and 504 as opt.Retry says, asks again for a body
// that breaks off from where it broke as opt.Reconnects says, and gives up on a body
// that stalls for opt.StallTimeout. When ctx is cancelled, the connection
// breaks or the body stalls, the partial file stays for a later call to resume
// (unless it is empty); on a checksum mismatch, or when the server sends more
// than it announced, it is deleted. File always fetches: callers that cache
// check dest themselves. Two processes must not download to the same dest at
// once: callers that may run side by side hold a LockFile around the check
// of dest and the download.
func File(ctx context.Context, url, dest string, opt Options) error {
	err := file(ctx, url, dest, opt)
	if c := (*checkFailed)(nil); errors.As(err, &c) && c.resumed && ctx.Err() == nil {
		err = file(ctx, url, dest, opt) // the partial file was deleted: from the start
	}
	return err
}

// checkFailed is a complete file that failed its sha256 or opt.Verify
// (deleted); resumed says it was resumed from a partial file.
type checkFailed struct {
	err     error
	resumed bool
}

func (e *checkFailed) Error() string { return e.err.Error() }
func (e *checkFailed) Unwrap() error { return e.err }

// file is one try of File.
func file(ctx context.Context, url, dest string, opt Options) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	part := dest + IncompleteSuffix
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	resumed := false
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		resumed = true
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
			return &checkFailed{fmt.Errorf("download %s: sha256 mismatch: got %s, want %s (the partial file was deleted)",
				url, got, strings.ToLower(opt.SHA256)), resumed}
		}
	}
	if opt.Verify != nil {
		if err := opt.Verify(part); err != nil {
			os.Remove(part)
			return &checkFailed{fmt.Errorf("download %s: %w (the file was deleted)", url, err), resumed}
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
	if d.opt.Size > 0 && offset > d.opt.Size {
		// Longer than the whole file: not a prefix of it.
		if err := d.f.Truncate(0); err != nil {
			return fmt.Errorf("download %s: %w", d.url, err)
		}
		offset = 0
	}
	// At most one restart from zero, when a range answer does not fit the
	// partial file (a 206 from another offset, or a 416 saying the remote file
	// is shorter than it); reconnects as opt.Reconnects says.
	restarted, failed := false, 0
	for {
		restart, err := d.try(offset)
		var broken *brokenBody
		if errors.As(err, &broken) && d.ctx.Err() == nil && d.reconnects() > 0 {
			wait := time.Duration(0)
			if broken.done < offset+StallMinBytes {
				failed++
				wait = time.Second
			} else {
				failed = 0
			}
			if failed > d.reconnects() {
				return err
			}
			t := time.NewTimer(wait)
			select {
			case <-d.ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
			offset = broken.done
			continue
		}
		if err != nil || !restart {
			return err
		}
		if restarted {
			return fmt.Errorf("download %s: server does not honour Range requests consistently", d.url)
		}
		restarted = true
		offset = 0
		if err := d.f.Truncate(0); err != nil {
			return fmt.Errorf("download %s: %w", d.url, err)
		}
	}
}

// try makes one request for the bytes from offset on and appends its body to
// the partial file; restart says that the partial file must be dropped and
// the download begun again from zero. The request's context is cancelled, with
// ErrStalled as the cause, when the body stalls.
func (d *fetch) try(offset int64) (restart bool, err error) {
	ctx, cancel := context.WithCancelCause(d.ctx)
	defer cancel(nil)
	if d.h != nil {
		d.h.Reset() // accept hashes the prefix it continues
	}
	resp, err := d.get(ctx, offset)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	done, total, restart, err := d.accept(resp, offset)
	if err != nil || restart {
		return restart, err
	}
	return false, d.copy(ctx, cancel, resp, done, total)
}

// get sends the request, asking for the bytes from offset on.
func (d *fetch) get(ctx context.Context, offset int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
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
	resp, err := Do(withCredentialPolicy(client), req, d.opt.Retry)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", d.url, err)
	}
	return resp, nil
}

// accept looks at the response to a request from offset. It returns the bytes
// already on disk that the body continues (the hash then covers them), the total
// size or -1 (opt.Size when the response does not say), and restart when the
// partial file must be dropped and the download begun again from zero.
func (d *fetch) accept(resp *http.Response, offset int64) (done, total int64, restart bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK:
		// The whole file, also when Range was ignored: copy starts over at 0.
		total, err := d.announced(resp.ContentLength)
		return 0, total, false, err
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset || (size >= 0 && size < offset) {
			return 0, 0, true, nil
		}
		if size < 0 && resp.ContentLength >= 0 {
			size = offset + resp.ContentLength
		}
		total, err := d.announced(size)
		if err != nil {
			return 0, 0, false, err
		}
		if err := d.hashPrefix(offset); err != nil {
			return 0, 0, false, err
		}
		return offset, total, false, nil
	case http.StatusRequestedRangeNotSatisfiable:
		// "bytes */SIZE": the partial file may be the whole file already.
		_, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if offset > 0 && ok && size == offset {
			if _, err := d.announced(size); err != nil {
				return 0, 0, false, err
			}
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

// announced checks the size of the whole file a response announces (-1 for
// none) against opt.Size, and returns the size known, or -1.
func (d *fetch) announced(size int64) (int64, error) {
	switch {
	case d.opt.Size <= 0:
		return size, nil
	case size < 0:
		return d.opt.Size, nil
	case size != d.opt.Size:
		return 0, fmt.Errorf("download %s: the server announces %d bytes, not the %d expected", d.url, size, d.opt.Size)
	}
	return size, nil
}

// limit is the most bytes of the whole file copy accepts when the total is
// total (-1: announced nowhere), and what to say when the server sends more.
func (d *fetch) limit(total int64) (int64, string, error) {
	if total >= 0 {
		return total, fmt.Sprintf("the %d bytes it announced", total), nil
	}
	switch {
	case d.opt.MaxSize < 0:
		return 0, "", fmt.Errorf("download %s: the server announced no size (neither Content-Length nor Content-Range), "+
			"and this file needs one", d.url)
	case d.opt.MaxSize == 0:
		return DefaultMaxSize, fmt.Sprintf("%d bytes without announcing a size (the most accepted then)", int64(DefaultMaxSize)), nil
	}
	return d.opt.MaxSize, fmt.Sprintf("%d bytes without announcing a size (the most accepted then)", d.opt.MaxSize), nil
}

// ErrNoSpace is in the error of a download refused because its file cannot
// fit in the free space where it goes.
var ErrNoSpace = errors.New("not enough free space")

// freeSpace is diskFree, replaced by tests.
var freeSpace = diskFree

// checkSpace refuses, before a byte is written, a download whose file
// (total bytes, done of them on disk) cannot fit where it goes: it would
// fail at the end of the space after filling the disk, maybe hours later.
// The partial file stays for a later call. A total announced nowhere (-1)
// or a file system that reports no space is not checked.
func (d *fetch) checkSpace(done, total int64) error {
	if total < 0 {
		return nil
	}
	what := fmt.Sprintf("the file (%s in all)", byteSize(total))
	if err := CheckSpace(filepath.Dir(d.part), total-done, what, d.opt.SpaceHint); err != nil {
		return fmt.Errorf("download %s: %w%s", d.url, err, resumeNote(done))
	}
	return nil
}

// CheckSpace returns an error wrapping ErrNoSpace when need more bytes for
// what ("the file", "4 shards") cannot fit in the free space of the file
// system holding dir, and nil where they fit or the file system reports no
// space (or dir does not exist). hint says what else to do besides freeing
// space ("" for "download to another disk").
func CheckSpace(dir string, need int64, what, hint string) error {
	free, ok := freeSpace(dir)
	if !ok || free >= need {
		return nil
	}
	if hint == "" {
		hint = "download to another disk"
	}
	return fmt.Errorf("%w in %s: %s needs %s more, and %s is free; free some space (%s)", ErrNoSpace, dir, what,
		byteSize(need), byteSize(free), hint)
}

// resumeNote says that the partial file's done bytes will be resumed.
func resumeNote(done int64) string {
	if done == 0 {
		return ""
	}
	return fmt.Sprintf(" (the %s downloaded so far are kept and resumed)", byteSize(done))
}

// byteSize is n bytes for people: "1.5 GB", "300 kB", "12 bytes" (SI units,
// as download sizes are usually given).
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, prefixes := float64(n)/unit, "kMGTPE"
	i := 0
	for ; v >= unit && i < len(prefixes)-1; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %cB", v, prefixes[i])
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

func (d *fetch) reconnects() int {
	switch {
	case d.opt.Reconnects < 0:
		return 0
	case d.opt.Reconnects == 0:
		return DefaultReconnects
	}
	return d.opt.Reconnects
}

func (d *fetch) stallTimeout() time.Duration {
	switch {
	case d.opt.StallTimeout < 0:
		return 0
	case d.opt.StallTimeout == 0:
		return DefaultStallTimeout
	}
	return d.opt.StallTimeout
}

// copy appends the body to the partial file from offset done, reading no more
// than the size announced; when nothing arrives for the stall timeout, it
// cancels ctx (the request's) with ErrStalled. A 416 response (already
// complete) has nothing to copy.
func (d *fetch) copy(ctx context.Context, cancel context.CancelCauseFunc, resp *http.Response, done, total int64) error {
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil
	}
	limit, announced, err := d.limit(total)
	if err != nil {
		return err
	}
	if done > limit {
		return fmt.Errorf("download %s: the partial file %s holds %d bytes, more than the %d of the whole file", d.url, d.part, done, limit)
	}
	if err := d.checkSpace(done, total); err != nil {
		return err
	}
	if err := d.f.Truncate(done); err != nil {
		return fmt.Errorf("download %s: %w", d.url, err)
	}
	if _, err := d.f.Seek(done, io.SeekStart); err != nil {
		return fmt.Errorf("download %s: %w", d.url, err)
	}
	d.progress(done, total)
	stall := d.stallTimeout()
	var w *Watch
	if stall > 0 {
		w = NewWatch(stall, func(time.Duration) { cancel(ErrStalled) })
		defer w.Stop()
	}
	var fresh int64 // bytes since the stall watch was last touched
	buf := make([]byte, 256<<10)
	for {
		// At most one byte past the limit: enough to see that the server sends more.
		n, rerr := resp.Body.Read(buf[:min(int64(len(buf)), limit-done+1)])
		if n > 0 {
			if fresh += int64(n); fresh >= StallMinBytes {
				w.Touch()
				fresh = 0
			}
			if done+int64(n) > limit {
				// What came is not the file announced: nothing to resume from.
				if err := d.f.Truncate(0); err != nil {
					return fmt.Errorf("download %s: %w", d.url, err)
				}
				return fmt.Errorf("download %s: the server sent more than %s (the partial file was deleted)", d.url, announced)
			}
			if _, err := d.f.Write(buf[:n]); err != nil {
				return fmt.Errorf("download %s: %w", d.url, err) // err names the file (an *os.PathError)
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
			} else if errors.Is(context.Cause(ctx), ErrStalled) {
				kept := "the partial file " + d.part + " is kept: run again to resume"
				if done == 0 {
					kept = "run again to retry"
				}
				return fmt.Errorf("download %s: %w: less than %d bytes arrived in %v (at %d bytes; %s)",
					d.url, ErrStalled, StallMinBytes, stall, done, kept)
			}
			if d.ctx.Err() != nil {
				return fmt.Errorf("download %s: interrupted after %d bytes (run again to resume): %w", d.url, done, rerr)
			}
			return &brokenBody{done, fmt.Errorf("download %s: interrupted after %d bytes (run again to resume): %w", d.url, done, rerr)}
		}
	}
	if total >= 0 && done != total {
		return &brokenBody{done, fmt.Errorf("download %s: got %d of %d bytes (run again to resume)", d.url, done, total)}
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
