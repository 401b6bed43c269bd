package ledger

import (
	"reflect"
	"testing"
)

func TestFormatParseMessageRoundTrip(t *testing.T) {
	trailers := []Trailer{{"Descent-Library", "pdf"}, {"Descent-Worker", "3"}}
	for _, c := range []struct {
		name              string
		subject, body     string
		trailers          []Trailer
		wantTrailers      []Trailer // nil: the trailers given
		wantSubj, wantBdy string
		wantMsg           string
	}{
		{
			name: "subject only", subject: "Tighten the rubric",
			wantSubj: "Tighten the rubric", wantMsg: "Tighten the rubric\n",
		},
		{
			name: "subject newlines folded", subject: "Tighten\nthe   rubric\r\n ",
			trailers: trailers, wantSubj: "Tighten the rubric",
			wantMsg: "Tighten the rubric\n\nDescent-Library: pdf\nDescent-Worker: 3\n",
		},
		{
			name: "body with blank lines", subject: "s",
			body:     "\n\nFirst paragraph\nwraps.\n\nSecond paragraph.\n\n\nThird, after two blank lines.\n\n",
			trailers: trailers, wantSubj: "s",
			wantBdy: "First paragraph\nwraps.\n\nSecond paragraph.\n\n\nThird, after two blank lines.",
			wantMsg: "s\n\nFirst paragraph\nwraps.\n\nSecond paragraph.\n\n\nThird, after two blank lines.\n\nDescent-Library: pdf\nDescent-Worker: 3\n",
		},
		{
			name: "body that looks like trailers stays body", subject: "s",
			body: "See: the failing task\nCloses: nothing", trailers: trailers,
			wantSubj: "s", wantBdy: "See: the failing task\nCloses: nothing",
			wantMsg: "s\n\nSee: the failing task\nCloses: nothing\n\nDescent-Library: pdf\nDescent-Worker: 3\n",
		},
		{
			name: "trailer value folded", subject: "s",
			trailers:     []Trailer{{"Descent-Tasks", "a\nb  c"}},
			wantTrailers: []Trailer{{"Descent-Tasks", "a b c"}},
			wantSubj:     "s", wantMsg: "s\n\nDescent-Tasks: a b c\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := formatMessage(c.subject, c.body, c.trailers)
			if msg != c.wantMsg {
				t.Fatalf("formatMessage = %q, want %q", msg, c.wantMsg)
			}
			subj, body, ts := parseMessage(msg)
			if subj != c.wantSubj || body != c.wantBdy {
				t.Errorf("parseMessage subject %q body %q, want %q %q", subj, body, c.wantSubj, c.wantBdy)
			}
			want := c.wantTrailers
			if want == nil {
				want = c.trailers
			}
			if !reflect.DeepEqual(ts, want) {
				t.Errorf("parseMessage trailers %q, want %q", ts, want)
			}
		})
	}
}

func TestParseMessage(t *testing.T) {
	for _, c := range []struct {
		name, msg     string
		subject, body string
		trailers      []Trailer
	}{
		{
			name:    "last paragraph not all trailers is body",
			msg:     "s\n\nbody\n\nA: b\nthis line is prose\n",
			subject: "s", body: "body\n\nA: b\nthis line is prose",
		},
		{
			name:    "key with a space is not a trailer",
			msg:     "s\n\nbody\n\nNot a key: b\n",
			subject: "s", body: "body\n\nNot a key: b",
		},
		{
			name:    "CRLF line endings",
			msg:     "s\r\n\r\nbody\r\n\r\nA: 1\r\nB: x: y\r\n",
			subject: "s", body: "body", trailers: []Trailer{{"A", "1"}, {"B", "x: y"}},
		},
		{
			name: "empty message", msg: "",
		},
		{
			name: "trailers only", msg: "s\n\nA: 1\n\n\n",
			subject: "s", trailers: []Trailer{{"A", "1"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			subj, body, ts := parseMessage(c.msg)
			if subj != c.subject || body != c.body || !reflect.DeepEqual(ts, c.trailers) {
				t.Errorf("parseMessage(%q) = %q, %q, %q; want %q, %q, %q", c.msg, subj, body, ts, c.subject, c.body, c.trailers)
			}
		})
	}
}

func TestTrailerValueIgnoresCase(t *testing.T) {
	ts := []Trailer{{"descent-library", "a"}, {"Descent-Library", "b"}}
	if got := trailerValue(ts, "DESCENT-LIBRARY"); got != "a" {
		t.Errorf("trailerValue = %q, want the first match %q", got, "a")
	}
	if got := trailerValue(ts, "Descent-Worker"); got != "" {
		t.Errorf("trailerValue of a missing key = %q", got)
	}
}
