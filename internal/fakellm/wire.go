package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// encode is v as JSON without HTML escaping, so that scripts can match
// replies containing <, > and & literally. It ends in a newline.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("fakellm: encode %T: %v", v, err)) // only plain structs reach here
	}
	return buf.Bytes()
}

// writeJSON answers with status and v as the JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encode(v))
}

// events writes a 200 answer as server-sent events, each flushed as it is
// written, as the streaming APIs do.
type events struct {
	w http.ResponseWriter
}

func startEvents(w http.ResponseWriter) events {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return events{w}
}

// send writes one event named name whose data is fields as JSON, with
// "type" set to name, as both streaming APIs have it.
func (e events) send(name string, fields map[string]any) {
	fields["type"] = name
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n", name, encode(fields)) // encode's newline ends the event
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}
