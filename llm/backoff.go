package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff returns how long to wait before retry n (1 for the first retry).
//
// It uses "equal jitter": the step is base·2^(n-1), capped at maxWait; half
// of the step is always waited and the other half is drawn uniformly at
// random. Waits therefore grow with n (retry n waits at least half its step)
// while clients that failed together spread out. A server's Retry-After
// raises the wait to at least serverWait. The result never exceeds maxWait.
func backoff(n int, base, maxWait, serverWait time.Duration) time.Duration {
	step := base
	for i := 1; i < n && step < maxWait; i++ {
		step *= 2
	}
	step = min(step, maxWait)
	half := step / 2
	d := step - half + rand.N(half+1)
	return min(max(d, serverWait), maxWait)
}

// maxServerWait bounds a parsed Retry-After so converting it cannot overflow.
const maxServerWait = 24 * time.Hour

// retryAfter returns how long the response's headers ask the client to wait:
// OpenAI's "retry-after-ms" (milliseconds) if present, else "Retry-After" as
// delta-seconds or an HTTP date, relative to now. It returns 0 when neither
// is present or parsable, or the date has passed.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, ok := nonNegative(h.Get("Retry-After-Ms")); ok {
		return seconds(ms / 1000)
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if s, ok := nonNegative(v); ok {
		return seconds(s)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxServerWait)
	}
	return 0
}

// nonNegative parses s as a number ≥ 0, capped at maxServerWait seconds.
func nonNegative(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return min(f, maxServerWait.Seconds()), err == nil && f >= 0 // false for NaN
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// sleep waits d or until ctx is done, returning ctx.Err() in that case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
