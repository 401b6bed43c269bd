package fakellm

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultCodexModel is the model WriteCodexHome configures when given none.
const DefaultCodexModel = "gpt-5.4"

// codexConfig is Codex's config.toml for a server, given the model and the
// server's /v1 URL. Codex 0.171 ignores OPENAI_BASE_URL and needs a provider;
// the provider's name must not be empty. Every key is one that
// `codex exec --strict-config` accepts.
const codexConfig = `# Written by fakellm: Codex talks to the fake server on 127.0.0.1 only.
model = %q
model_provider = "fakellm"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[model_providers.fakellm]
name = "fakellm"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"
`

// WriteCodexHome writes dir/config.toml, creating dir, so that Codex run with
// CODEX_HOME=dir asks s for model ("" for DefaultCodexModel) over the
// Responses API, with the key in OPENAI_API_KEY, and has its update check,
// analytics, feedback and OpenTelemetry export off. An existing config.toml
// is replaced.
//
// The provider's table comes last, so lines appended to the file set
// provider options: "request_max_retries = 0" and "stream_max_retries = 0"
// make Codex 0.171 fail at the first error status, where it otherwise sends
// a 401 or 529 six times and a 500 thirty times (about 25 s). Nothing makes
// it give up on a refused connection: it waits for the network until killed.
func (s *Server) WriteCodexHome(dir, model string) error {
	if model == "" {
		model = DefaultCodexModel
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write Codex home: %w", err)
	}
	config := fmt.Sprintf(codexConfig, model, s.URL())
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		return fmt.Errorf("write Codex home: %w", err)
	}
	return nil
}
