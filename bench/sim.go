package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-descent/git-descent/agent"
)

// Latency is how long a simulated agent takes per call: fixed, uniform
// between two durations, or lognormal around a median with a spread σ
// (σ = 1 makes one call in ten take 3.6 × the median or more).
type Latency struct {
	Kind  string        // "fixed", "uniform" or "lognormal"
	A, B  time.Duration // fixed: A; uniform: A to B; lognormal: median A
	Sigma float64       // lognormal only
}

// ParseLatency reads "0", "fixed:50ms", "uniform:10ms-90ms" or
// "lognormal:50ms,1" (the median, then σ).
func ParseLatency(s string) (Latency, error) {
	kind, arg, _ := strings.Cut(s, ":")
	bad := func(err error) (Latency, error) {
		return Latency{}, fmt.Errorf("latency %q: %v (want 0, fixed:50ms, uniform:10ms-90ms or lognormal:50ms,1)", s, err)
	}
	switch kind {
	case "0":
		return Latency{Kind: "fixed"}, nil
	case "fixed":
		d, err := time.ParseDuration(arg)
		if err != nil || d < 0 {
			return bad(fmt.Errorf("not a duration"))
		}
		return Latency{Kind: kind, A: d}, nil
	case "uniform":
		lo, hi, _ := strings.Cut(arg, "-")
		a, err1 := time.ParseDuration(lo)
		b, err2 := time.ParseDuration(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return bad(fmt.Errorf("want two durations, the lower first"))
		}
		return Latency{Kind: kind, A: a, B: b}, nil
	case "lognormal":
		med, sig, _ := strings.Cut(arg, ",")
		a, err1 := time.ParseDuration(med)
		sigma, err2 := strconv.ParseFloat(sig, 64)
		if err1 != nil || err2 != nil || a < 0 || sigma < 0 || sigma > 4 {
			return bad(fmt.Errorf("want a median duration and σ between 0 and 4"))
		}
		return Latency{Kind: kind, A: a, Sigma: sigma}, nil
	}
	return bad(fmt.Errorf("unknown distribution %q", kind))
}

func (l Latency) String() string {
	switch l.Kind {
	case "uniform":
		return fmt.Sprintf("uniform %s–%s", l.A, l.B)
	case "lognormal":
		return fmt.Sprintf("lognormal, median %s, σ %g", l.A, l.Sigma)
	}
	if l.A == 0 {
		return "none"
	}
	return "fixed " + l.A.String()
}

// Draw picks one call's duration.
func (l Latency) Draw(rng *rand.Rand) time.Duration {
	switch l.Kind {
	case "uniform":
		return l.A + time.Duration(rng.Int64N(int64(l.B-l.A)+1))
	case "lognormal":
		return time.Duration(float64(l.A) * math.Exp(l.Sigma*rng.NormFloat64()))
	}
	return l.A
}

// wait sleeps for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sim is a simulated agent and proposer for a domain, run in git-descent's
// own process instead of as commands: each call takes a duration drawn from
// Latency, and the agent answers wrongly with probability Error. It reads
// and writes the skill's files where git-descent laid them out, so the
// plumbing (workspaces, seats, commits) is the real one.
type Sim struct {
	Domain  Domain
	Latency Latency
	Error   float64 // probability that a rollout's answer is wrong
	Seed    int     // varies the proposer between runs

	mu  sync.Mutex
	rng *rand.Rand // latencies and errors: noise, not part of any result's identity
}

// NewSim returns the simulated agents of a domain.
func NewSim(d Domain, lat Latency, errRate float64, seed int) *Sim {
	return &Sim{Domain: d, Latency: lat, Error: errRate, Seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano())))}
}

// Name says what the agent is, for evidence and the rollout cache key.
func (s *Sim) Name() string {
	return fmt.Sprintf("bench %s (latency %s, error %g, seed %d)", s.Domain.Name(), s.Latency, s.Error, s.Seed)
}

// draw picks a call's duration and whether its answer goes wrong.
func (s *Sim) draw() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Latency.Draw(s.rng), s.rng.Float64() < s.Error
}

// Run implements agent.Runner.
func (s *Sim) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	d, wrong := s.draw()
	if err := wait(ctx, d); err != nil {
		return agent.Response{}, err
	}
	skill, err := os.ReadFile(filepath.Join(req.SkillDir, skillFile))
	if err != nil {
		return agent.Response{}, fmt.Errorf("bench agent: %w", err)
	}
	out := s.Domain.Answer(map[string]string{skillFile: string(skill)}, req.Prompt)
	if wrong {
		out = "(wrong)"
	}
	return agent.Response{Output: out}, nil
}

// Propose implements agent.Proposer: the domain's proposer, after one
// call's latency.
func (s *Sim) Propose(ctx context.Context, req agent.ProposeRequest) (agent.Rationale, error) {
	d, _ := s.draw()
	if err := wait(ctx, d); err != nil {
		return agent.Rationale{}, err
	}
	file := filepath.Join(req.SkillDir, skillFile)
	text, err := os.ReadFile(file)
	if err != nil {
		return agent.Rationale{}, fmt.Errorf("bench proposer: %w", err)
	}
	var failed []string
	for _, f := range req.Feedback.Failures {
		failed = append(failed, f.TaskID)
	}
	skill := map[string]string{skillFile: string(text)}
	rng := NewRand(s.Seed, req.Worker, req.Control, string(text), strings.Join(failed, "\x00"))
	subject := s.Domain.Propose(rng, skill, req.Feedback)
	if subject == "" {
		return agent.Rationale{}, nil
	}
	if err := os.WriteFile(file, []byte(skill[skillFile]), 0o644); err != nil {
		return agent.Rationale{}, err
	}
	return agent.Rationale{Subject: subject}, nil
}
