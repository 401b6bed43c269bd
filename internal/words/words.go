// Package words writes counts the way a sentence reads them: "1 proposal",
// "3 proposals", "2 retries".
package words

import "fmt"

// Count is n and the noun: one when n is 1, else many (the noun with an
// "s" when many is not given).
func Count[N ~int | ~int64](n N, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
