package ci

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/git-descent/git-descent/library"
)

// Workflow is a generated CI configuration.
type Workflow struct {
	Path    string // where it goes by default, relative to the repository's top, slash-separated
	Content []byte
	Needs   Needs // the secrets it names and what the user should know (Notes)
}

// plan is what the templates read: the options checked, the library's
// needs, and what differs between CI systems.
type plan struct {
	Options
	Lib     *library.Library
	Needs   Needs
	Command string   // the command line that writes it, for its header
	Path    string   // Workflow.Path
	Group   string   // the concurrency group (GitHub) or resource group (GitLab)
	Fetch   []string // FetchRefspecs
	// SecretsWhere says where the secrets are added: comment lines, the
	// last ending in ':'.
	SecretsWhere []string
	// Bwrap adds the step that lets bubblewrap work on the runner;
	// BwrapRequired when the library's isolation is bwrap, not auto.
	Bwrap, BwrapRequired bool
	worker               string // the shell word naming a worker's id
}

// newPlan checks in and o for a CI system that runs at most maxWorkers
// jobs of a matrix, and reads the library's needs.
func newPlan(system string, in Input, o Options, maxWorkers int) (*plan, error) {
	if err := checkOptions(in.Library, o, maxWorkers); err != nil {
		return nil, err
	}
	lib := in.Library
	return &plan{
		Options: o, Lib: lib, Needs: NeedsOf(in), Group: "git-descent-" + lib.Name, Fetch: FetchRefspecs(),
		Command: fmt.Sprintf("git descent ci %s %s --workers %d --max-time %s --idle %s", system, shellWord(lib.Name), o.Workers, Duration(o.MaxTime), Duration(o.Idle)),
	}, nil
}

// Name is the workflow's name.
func (p *plan) Name() string { return "git-descent " + p.Lib.Name }

// Install is the command that installs git-descent.
func (p *plan) Install() string {
	return "go install github.com/git-descent/git-descent/cmd/git-descent@" + p.Version
}

// Work is the command a worker job runs.
func (p *plan) Work() string {
	return fmt.Sprintf(`git descent work %s --worker "%s" --remote %s --max-time "$DESCENT_MAX_TIME"`, shellWord(p.Lib.Name), p.worker, Remote)
}

// Aggregate is the command of the aggregator beside the workers.
func (p *plan) Aggregate() string {
	return fmt.Sprintf(`git descent aggregate %s --remote %s --watch --idle %s --max-time "$DESCENT_MAX_TIME"`, shellWord(p.Lib.Name), Remote, Duration(p.Idle))
}

// Decide is the command of the last aggregation, after the workers.
func (p *plan) Decide() string {
	return fmt.Sprintf("git descent aggregate %s --remote %s", shellWord(p.Lib.Name), Remote)
}

// WorkerList is the matrix of worker ids, as a YAML flow sequence.
func (p *plan) WorkerList() string {
	ids := make([]string, p.Workers)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	return "[" + strings.Join(ids, ", ") + "]"
}

// workflow writes the named template with p.
func (p *plan) workflow(name string) (*Workflow, error) {
	b, err := render(name, p)
	if err != nil {
		return nil, fmt.Errorf("write the %s workflow: %w", name, err)
	}
	return &Workflow{Path: p.Path, Content: b, Needs: p.Needs}, nil
}
