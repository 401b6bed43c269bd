package sandbox

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
)

// ErrOffline means the process kept saying it was waiting for the network
// (Spec.Offline) for Spec.OfflineAfter and its process group was killed.
var ErrOffline = errors.New("stopped waiting for the network")

// maxLine bounds the partial line an offlineWatch keeps between writes.
const maxLine = 64 << 10

// offlineWatch passes standard output through to w and feeds each complete
// line to offline. A line saying the process is offline starts a timer of
// after (unless one is running); any other line stops it. When the timer
// fires, fire is called once. Writes come from one goroutine (os/exec's
// copier); the timer runs on its own, hence the lock.
type offlineWatch struct {
	w       io.Writer
	offline func(line []byte) bool
	after   time.Duration
	fire    func()

	partial []byte
	mu      sync.Mutex
	timer   *time.Timer
	last    string // the last offline line, for the error
}

func (o *offlineWatch) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	data := append(o.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		o.line(data[:i])
		data = data[i+1:]
	}
	if len(data) > maxLine {
		data = data[len(data)-maxLine:]
	}
	o.partial = append(o.partial[:0], data...)
	return n, err
}

func (o *offlineWatch) line(l []byte) {
	off := o.offline(l)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case off && o.timer == nil:
		o.last = clip(string(l), 200)
		o.timer = time.AfterFunc(o.after, o.fire)
	case off:
		o.last = clip(string(l), 200)
	case o.timer != nil:
		o.timer.Stop()
		o.timer = nil
	}
}

// stop ends the timer, if any, and returns the last offline line.
func (o *offlineWatch) stop() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer != nil {
		o.timer.Stop()
	}
	return o.last
}
