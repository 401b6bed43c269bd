package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffUsesEqualJitterWithinTheCap(t *testing.T) {
	base, maxWait := 10*time.Millisecond, 300*time.Millisecond
	for n := 1; n <= 8; n++ {
		step := min(base<<(n-1), maxWait)
		for range 200 {
			if d := backoff(n, base, maxWait, 0); d < step/2 || d > step {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, step/2, step)
			}
		}
	}
}

func TestBackoffHonoursServerWaitUpToTheCap(t *testing.T) {
	if d := backoff(1, time.Millisecond, time.Minute, 3*time.Second); d != 3*time.Second {
		t.Errorf("backoff with Retry-After 3s = %v, want 3s", d)
	}
	if d := backoff(1, time.Millisecond, time.Second, time.Hour); d != time.Second {
		t.Errorf("backoff with Retry-After 1h and cap 1s = %v, want 1s", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name, value string
		want        time.Duration
	}{
		{"Retry-After", "2", 2 * time.Second},
		{"Retry-After", " 0.5 ", 500 * time.Millisecond},
		{"Retry-After", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"Retry-After", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Retry-After", "soon", 0},
		{"Retry-After", "-3", 0},
		{"Retry-After", "NaN", 0},
		{"Retry-After", "1e12", maxServerWait},
		{"Retry-After-Ms", "250", 250 * time.Millisecond},
		{"X-Other", "5", 0},
	} {
		h := http.Header{}
		h.Set(tc.name, tc.value)
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("%s: %q = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}
