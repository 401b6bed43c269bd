package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-descent/git-descent/library"
	"github.com/git-descent/git-descent/llm"
)

// Reflect is the reflective proposer: a chat model reads the library's
// editable files and a minibatch of rollouts and answers with a rationale
// and edits (EditProtocol). Edits are validated before anything is written;
// an invalid reply is sent back once with the error, and a second invalid
// reply fails the proposal. Safe for concurrent use on different seats.
type Reflect struct {
	Client       *llm.Client
	Budget       int      // characters of file content in the prompt
	Guarded      []string // L1 globs, named in the brief
	Evals        string   // the eval file, relative to the library
	WholeFileMax int      // FILE may rewrite existing files up to this size; 0 means 4000
}

const reflectSystem = "You improve agent skills: directories of instructions (SKILL.md and the files it refers to) that an AI agent follows. " +
	"You are shown the skill's files and tasks the agent did with it. You change the files so the agent does better on tasks like these, " +
	"making general improvements rather than answering these particular tasks. You reply with edits in a strict format."

// Propose implements Proposer.
func (p *Reflect) Propose(ctx context.Context, req ProposeRequest) (Rationale, error) {
	whole := p.WholeFileMax
	if whole <= 0 {
		whole = 4000
	}
	rules := editRules{frozen: req.Feedback.Frozen, evals: p.Evals, wholeFileMax: whole}
	files := p.files(req.SkillDir, rules)
	user := Brief(req.Feedback, p.Guarded) + "\n## The skill's files\n\n" + files + "\n\n" + fmt.Sprintf(EditProtocol, whole)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: reflectSystem}, {Role: llm.RoleUser, Content: user}}
	var spent llm.Usage
	for attempt := 1; ; attempt++ {
		resp, err := p.Client.Complete(ctx, llm.Request{Messages: msgs})
		spent.Add(resp.Usage)
		usage := Rationale{Tokens: spent.Tokens(), Cost: spent.Cost}
		if infrastructure(err) {
			return usage, &InfraError{Err: err, Fatal: fatal(err)}
		}
		if err != nil {
			return usage, err
		}
		rat, blocks, err := parseReply(resp.Text)
		if err == nil && len(blocks) > 0 {
			_, err = applyEdits(req.SkillDir, blocks, rules)
		}
		if err == nil {
			rat.Tokens, rat.Cost = usage.Tokens, usage.Cost
			return rat, nil
		}
		if attempt == 2 {
			return usage, fmt.Errorf("the proposer's reply could not be applied twice; last: %w", err)
		}
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
			llm.Message{Role: llm.RoleUser, Content: "Your reply could not be applied, so nothing was changed: " + err.Error() +
				"\n\nReply again with the complete rationale and all edits, in the required format."})
	}
}

// files renders the library's text files for the prompt: SKILL.md first,
// then the rest sorted, frozen files by name only, within the budget.
func (p *Reflect) files(dir string, rules editRules) string {
	var paths []string
	_ = filepath.WalkDir(dir, func(f string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if rel, err := filepath.Rel(dir, f); err == nil {
				paths = append(paths, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	sort.SliceStable(paths, func(i, j int) bool { return paths[i] == "SKILL.md" && paths[j] != "SKILL.md" })
	var b strings.Builder
	var notShown []string
	for _, rel := range paths {
		if rel == rules.evals || library.MatchAny(rules.frozen, rel) {
			notShown = append(notShown, rel+" (frozen)")
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || strings.IndexByte(string(data), 0) >= 0 {
			notShown = append(notShown, rel+" (binary)")
			continue
		}
		if b.Len()+len(data) > p.Budget {
			notShown = append(notShown, fmt.Sprintf("%s (%d bytes, over the context budget; edit it only with SEARCH text you are sure of)", rel, len(data)))
			continue
		}
		fmt.Fprintf(&b, "=== %s ===\n%s", rel, data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "=== end of %s ===\n\n", rel)
	}
	if len(notShown) > 0 {
		fmt.Fprintf(&b, "Files not shown: %s\n", strings.Join(notShown, ", "))
	}
	return b.String()
}
