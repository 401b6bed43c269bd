package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "round"), "0 rounds"},
		{Count(1, "round"), "1 round"},
		{Count(2, "round"), "2 rounds"},
		{Count(int64(1), "retry", "retries"), "1 retry"},
		{Count(int64(3), "retry", "retries"), "3 retries"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
