package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// withZeroTemperature returns req with "temperature": 0 in its JSON body when
// the body has no temperature. go-openai tags Temperature omitempty, so a
// request for 0 would otherwise reach the server without one and get the
// server's default (usually 1). req itself is not modified.
func withZeroTemperature(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Method != http.MethodPost {
		return req, nil
	}
	raw, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err == nil {
		if _, ok := fields["temperature"]; !ok {
			fields["temperature"] = json.RawMessage("0")
			if patched, err := json.Marshal(fields); err == nil {
				raw = patched
			}
		}
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(raw))
	out.ContentLength = int64(len(raw))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	return out, nil
}
