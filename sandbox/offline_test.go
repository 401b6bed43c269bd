package sandbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func waiting(line []byte) bool { return bytes.Contains(line, []byte("waiting for network")) }

// A process that keeps saying it waits for the network is stopped after
// OfflineAfter, long before its timeout; the error quotes what it said.
func TestRunStopsAProcessWaitingForTheNetwork(t *testing.T) {
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Command: "echo started; while :; do echo 'Reconnecting... waiting for network'; sleep 0.05; done",
		Env:     Environ(nil, nil, ""), Timeout: time.Minute,
		Offline: waiting, OfflineAfter: 300 * time.Millisecond,
	})
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "Reconnecting... waiting for network") {
		t.Fatalf("err = %v, want ErrOffline quoting the line", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %s", d)
	}
	if !strings.HasPrefix(string(res.Stdout), "started\n") {
		t.Fatalf("stdout lost: %q", res.Stdout)
	}
}

// Progress between offline lines resets the clock: a client that recovers
// is not stopped.
func TestRunKeepsAProcessThatRecovers(t *testing.T) {
	cmd := "for i in 1 2 3 4 5 6; do echo 'waiting for network'; sleep 0.1; echo progress; done; echo done"
	res, err := Run(context.Background(), Spec{
		Command: cmd, Env: Environ(nil, nil, ""), Offline: waiting, OfflineAfter: 400 * time.Millisecond,
	})
	if err != nil || !strings.HasSuffix(string(res.Stdout), "done\n") {
		t.Fatalf("err = %v, stdout %q", err, res.Stdout)
	}
}
