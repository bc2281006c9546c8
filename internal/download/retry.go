package download

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultRetries is Retry.Max when it is zero.
const DefaultRetries = 4

// DefaultMaxRetryWait is Retry.MaxWait when it is zero.
const DefaultMaxRetryWait = time.Minute

// Retry says how a request answered "429 Too Many Requests", "503 Service
// Unavailable", "502 Bad Gateway" or "504 Gateway Timeout" is tried again: after the wait the server asks for with
// Retry-After (in seconds or as an HTTP date), else after 1 s, 2 s, 4 s ...,
// at most Max times. No other answer and no transport error is retried. The
// zero value is usable.
type Retry struct {
	// Max is the most retries of one request; 0 means DefaultRetries and a
	// negative value none.
	Max int
	// MaxWait is the longest wait before a retry. A server that asks for a
	// longer one is not retried (its answer is returned, so the caller reports
	// it), rather than asked again before the time it named; the backoff
	// without Retry-After is capped at MaxWait. 0 means DefaultMaxRetryWait.
	MaxWait time.Duration
}

func (r Retry) max() int {
	switch {
	case r.Max < 0:
		return 0
	case r.Max == 0:
		return DefaultRetries
	}
	return r.Max
}

func (r Retry) maxWait() time.Duration {
	if r.MaxWait <= 0 {
		return DefaultMaxRetryWait
	}
	return r.MaxWait
}

// retryable reports whether a response with this status may be retried:
// rate limits, a busy server, and the gateway errors a proxy or CDN sends
// when what stands behind it fails for a moment (huggingface_hub retries
// them too). A 500 is the server's own failure, not retried.
func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// wait is how long to wait before retry number attempt+1 of a request
// answered resp, or false when it must not be retried.
func (r Retry) wait(resp *http.Response, attempt int, now time.Time) (time.Duration, bool) {
	if !retryable(resp.StatusCode) || attempt >= r.max() {
		return 0, false
	}
	limit := r.maxWait()
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
		return d, d <= limit
	}
	d := time.Second << min(attempt, 16)
	return min(d, limit), true
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (a date in the past is no wait). ok is false when the header is absent or
// malformed.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Beyond any cap anyway; avoid overflowing Duration.
		return time.Duration(min(secs, int64(1e6))) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Do sends req with c and returns the response, retrying as r says while the
// answer is 429, 502, 503 or 504. Each try sends a clone of req (which must have no
// body); the waits end early, with an error, when req's context does. The
// last answer is returned whatever its status, for the caller to judge (see
// NewHTTPError); a transport error is returned at once.
func Do(c *http.Client, req *http.Request, r Retry) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		resp, err := c.Do(req.Clone(ctx))
		if err != nil {
			return nil, err
		}
		d, again := r.wait(resp, attempt, time.Now())
		if !again {
			return resp, nil
		}
		// Not drained: a body that trickles would hold the retry up.
		resp.Body.Close()
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting %v to retry after %s: %w", d, resp.Status, ctx.Err())
		case <-t.C:
		}
	}
}
