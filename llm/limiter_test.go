package llm

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimiterBoundsRequestsAcrossClients(t *testing.T) {
	var inFlight, most atomic.Int64
	s := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			seen := most.Load()
			if now <= seen || most.CompareAndSwap(seen, now) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		writeReply(w, "ok", 1, 1)
	})
	lim := NewLimiter(2)
	var clients []*Client
	for _, model := range []string{"model-a", "model-b"} {
		c, err := New(Config{BaseURL: s.URL + "/v1", Model: model}, lim)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}

	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			if _, err := clients[i%2].Complete(t.Context(), hello); err != nil {
				t.Errorf("Complete: %v", err)
			}
		})
	}
	wg.Wait()
	if got := most.Load(); got != 2 {
		t.Errorf("at most %d requests in flight, want 2", got)
	}
	if s.calls.Load() != 12 {
		t.Errorf("%d requests, want 12", s.calls.Load())
	}
}
