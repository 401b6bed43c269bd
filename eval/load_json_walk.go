package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// eachMember calls fn with each member of the JSON object raw, which starts
// at byte off of the file, passing each value's own offset. raw must be
// syntactically valid (it came from a decoder). fn's error stops the walk.
func eachMember(raw json.RawMessage, off int, fn func(key string, v json.RawMessage, voff int) error) error {
	dec, err := openComposite(raw, '{')
	if err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("read object key: %w", err)
		}
		key, _ := tok.(string)
		v, voff, err := nextValue(dec, off)
		if err != nil {
			return err
		}
		if err := fn(key, v, voff); err != nil {
			return err
		}
	}
	return nil
}

// eachElement calls fn with each element of the JSON array raw, which
// starts at byte off of the file, passing each element's own offset. raw
// must be syntactically valid. fn's error stops the walk.
func eachElement(raw json.RawMessage, off int, fn func(i int, v json.RawMessage, voff int) error) error {
	dec, err := openComposite(raw, '[')
	if err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		v, voff, err := nextValue(dec, off)
		if err != nil {
			return err
		}
		if err := fn(i, v, voff); err != nil {
			return err
		}
	}
	return nil
}

// openComposite returns a decoder positioned inside raw, which must open
// with delim.
func openComposite(raw json.RawMessage, delim json.Delim) (*json.Decoder, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("read JSON %v: %w", delim, err)
	}
	if tok != delim {
		return nil, fmt.Errorf("read JSON: want %v, found %v", delim, tok)
	}
	return dec, nil
}

// nextValue decodes the decoder's next value and returns it with its
// absolute offset, given that the decoder's input starts at byte base.
func nextValue(dec *json.Decoder, base int) (json.RawMessage, int, error) {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, 0, fmt.Errorf("read JSON value: %w", err)
	}
	// The decoder stops right after the value, and RawMessage holds its
	// exact bytes without surrounding space.
	return v, base + int(dec.InputOffset()) - len(v), nil
}
