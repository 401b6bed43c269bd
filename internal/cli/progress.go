package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/git-descent/git-descent/evolve"
	"github.com/git-descent/git-descent/internal/words"
)

// display sets how a run shows itself: with asJSON a JSON-lines event
// stream on stdout (returned, for the summary), with a status event every
// `every` (default 5s), and the lines for people on stderr; quiet drops
// those lines; on a terminal a live status block under them; elsewhere (a
// CI log) a status line every `every` (default 30s). A negative every
// means no status events or lines. done ends the display.
func (e *env) display(o *evolve.Options, asJSON, quiet bool, every time.Duration) (events *jsonEvents, done func()) {
	o.Out, done = e.stdout, func() {}
	periodic := func(f func(evolve.Status), d time.Duration) {
		switch {
		case every < 0:
		case every > 0:
			o.OnStatus, o.StatusEvery = f, every
		default:
			o.OnStatus, o.StatusEvery = f, d
		}
	}
	switch {
	case asJSON:
		events = newJSONEvents(e.stdout)
		o.Out, o.OnEvent = e.stderr, events.event
		if quiet {
			o.Out = io.Discard
		}
		periodic(events.status, 5*time.Second)
	case quiet:
		o.Out = io.Discard
	case e.terminal != nil && e.terminal(e.stdout) && os.Getenv("TERM") != "dumb":
		l := newLive(e.stdout)
		o.Out, o.OnStatus, o.StatusEvery, o.OnWatch, done = l, l.status, 500*time.Millisecond, l.watch, l.close
	default:
		periodic(func(s evolve.Status) { fmt.Fprintln(e.stdout, statusLine(s)) }, 30*time.Second)
	}
	return events, done
}

// live keeps a status block under a run's output on a terminal: output
// lines written through it scroll above the block, which is redrawn with
// every status.
type live struct {
	mu      sync.Mutex
	w       io.Writer
	width   func() int
	shown   int  // lines of the block on the screen
	partial bool // the output's last line is not finished: draw nothing under it
	last    *evolve.Status
	get     func() evolve.Status // a fresh snapshot, once the run gives one
}

// watch keeps get, so that every redraw shows the run as it is now.
func (l *live) watch(get func() evolve.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.get = get
}

func newLive(w io.Writer) *live {
	l := &live{w: w, width: func() int { return 100 }}
	if f, ok := w.(*os.File); ok {
		l.width = func() int {
			if c, _, err := term.GetSize(int(f.Fd())); err == nil && c > 20 {
				return c
			}
			return 100
		}
	}
	return l
}

// Write passes output through, above the block.
func (l *live) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	n, err := l.w.Write(p)
	l.partial = len(p) > 0 && p[len(p)-1] != '\n'
	l.draw()
	return n, err
}

// status redraws the block with s.
func (l *live) status(s evolve.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = &s
	l.clear()
	l.draw()
}

// close removes the block for good.
func (l *live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.last, l.get = nil, nil
}

func (l *live) clear() {
	for ; l.shown > 0; l.shown-- {
		fmt.Fprint(l.w, "\x1b[1A\x1b[2K") // up one line, erase it
	}
}

func (l *live) draw() {
	if l.partial {
		return
	}
	if l.get != nil {
		s := l.get()
		l.last = &s
	}
	if l.last == nil {
		return
	}
	lines := statusLines(*l.last, l.width())
	for _, s := range lines {
		fmt.Fprintln(l.w, s)
	}
	l.shown = len(lines)
}

// statusLines renders a run's status as the lines of the live block, each
// at most width characters: time and phase, one line per worker, the
// rollouts, dev's validation so far and the spend.
func statusLines(s evolve.Status, width int) []string {
	head := fmt.Sprintf("── %s", dur(s.Elapsed))
	if s.Left > 0 {
		head += fmt.Sprintf(" · %s left", dur(s.Left))
	}
	head += fmt.Sprintf(" · %s decided", words.Count(s.Round, "round"))
	if s.Doing != "" {
		head += " · " + s.Doing
	}
	lines := []string{head}
	for _, w := range s.Workers {
		lines = append(lines, fmt.Sprintf("   %-4s %s", w.Worker, w.Doing))
	}
	r := s.Rollouts
	line := fmt.Sprintf("   rollouts %d run, %d from the cache · %d of %d slots busy", r.Run, r.Cached, r.Running, r.Slots)
	if r.Waiting > 0 {
		line += fmt.Sprintf(", %d waiting", r.Waiting)
	}
	if r.Errored > 0 {
		line += fmt.Sprintf(" · %d could not run", r.Errored)
	}
	lines = append(lines, line)
	if len(s.Validation) > 0 {
		var scores []string
		for _, p := range s.Validation[max(0, len(s.Validation)-6):] {
			scores = append(scores, fmt.Sprintf("%.2f", p.Score))
		}
		line := "   dev validation " + strings.Join(scores, " → ")
		if s.Tokens > 0 || s.Cost > 0 {
			line += fmt.Sprintf(" · spent %s, $%.2f", words.Count(s.Tokens, "token"), s.Cost)
		}
		lines = append(lines, line)
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > width-1 {
			lines[i] = string(r[:width-2]) + "…"
		}
	}
	return lines
}

// statusLine is the status as one line, for logs that are not a terminal.
func statusLine(s evolve.Status) string {
	busy := 0
	for _, w := range s.Workers {
		if !strings.HasPrefix(w.Doing, "waiting") && w.Doing != "" {
			busy++
		}
	}
	line := fmt.Sprintf("progress: %s, %s decided; %d of %d workers busy; rollouts %d run, %d from the cache, %d running, %d waiting",
		dur(s.Elapsed), words.Count(s.Round, "round"), busy, len(s.Workers), s.Rollouts.Run, s.Rollouts.Cached, s.Rollouts.Running, s.Rollouts.Waiting)
	if n := len(s.Validation); n > 0 {
		line += fmt.Sprintf("; dev %.2f", s.Validation[n-1].Score)
	}
	if s.Left > 0 {
		line += fmt.Sprintf("; %s left", dur(s.Left))
	}
	return line
}

func dur(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// jsonEvents writes evolve --json's stream: one JSON object per line,
// each with "event" naming its kind.
type jsonEvents struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newJSONEvents(w io.Writer) *jsonEvents { return &jsonEvents{enc: json.NewEncoder(w)} }

func (j *jsonEvents) write(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(v)
}

func (j *jsonEvents) event(e evolve.Event) { j.write(e) }

func (j *jsonEvents) status(s evolve.Status) {
	j.write(struct {
		Event string `json:"event"`
		evolve.Status
	}{"status", s})
}

func (j *jsonEvents) summary(s *evolve.Summary) {
	j.write(struct {
		Event string    `json:"event"`
		Time  time.Time `json:"time"`
		*evolve.Summary
	}{"summary", time.Now().UTC(), s})
}
