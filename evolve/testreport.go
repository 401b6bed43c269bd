package evolve

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
)

// testReport is what an oracle's test report says.
type testReport struct {
	Tests    int // test cases in the report, skipped ones included
	Failures int // failed or errored
	Skipped  int
}

// Ran is how many tests ran: those not skipped.
func (r testReport) Ran() int { return r.Tests - r.Skipped }

// Failed is how many tests failed or errored.
func (r testReport) Failed() int { return r.Failures }

// maxReport caps the report an oracle may write.
const maxReport = 16 << 20

// readReport reads the report an oracle wrote: a regular file of JUnit XML
// (what pytest --junitxml, go-junit-report, jest-junit and most runners
// write) or a JSON object {"tests": N, "failures": M, "skipped": K}.
func readReport(path string) (testReport, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return testReport{}, errors.New("it wrote no report to $DESCENT_ORACLE_REPORT")
	case err != nil:
		return testReport{}, err
	case !fi.Mode().IsRegular():
		return testReport{}, errors.New("its report at $DESCENT_ORACLE_REPORT is not a regular file")
	case fi.Size() > maxReport:
		return testReport{}, fmt.Errorf("its report is over %d MiB", maxReport>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return testReport{}, err
	}
	return parseReport(data)
}

// parseReport reads a JUnit XML or JSON test report.
func parseReport(data []byte) (testReport, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var j struct {
			Tests, Failures, Errors, Skipped *int
		}
		if err := json.Unmarshal(trimmed, &j); err != nil || j.Tests == nil {
			return testReport{}, errors.New(`its JSON report is not {"tests": N, "failures": M}`)
		}
		r := testReport{Tests: *j.Tests}
		for _, n := range []*int{j.Failures, j.Errors} {
			if n != nil {
				r.Failures += *n
			}
		}
		if j.Skipped != nil {
			r.Skipped = *j.Skipped
		}
		return r.check()
	}
	var r testReport
	suites := 0
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth, caseDepth := 0, -1
	failed, skipped := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return testReport{}, fmt.Errorf("its report is neither JSON nor JUnit XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch name := t.Name.Local; {
			case name == "testsuite" || name == "testsuites":
				suites++
			case name == "testcase" && caseDepth < 0:
				caseDepth, failed, skipped = depth, false, false
			case caseDepth >= 0 && (name == "failure" || name == "error"):
				failed = true
			case caseDepth >= 0 && name == "skipped":
				skipped = true
			}
		case xml.EndElement:
			if depth == caseDepth {
				r.Tests++
				switch {
				case failed:
					r.Failures++
				case skipped:
					r.Skipped++
				}
				caseDepth = -1
			}
			depth--
		}
	}
	if suites == 0 {
		return testReport{}, errors.New("its report is neither JSON nor JUnit XML (no <testsuite>)")
	}
	return r.check()
}

// check refuses a report that counts what cannot be.
func (r testReport) check() (testReport, error) {
	if r.Tests < 0 || r.Failures < 0 || r.Skipped < 0 || r.Failures+r.Skipped > r.Tests {
		return testReport{}, fmt.Errorf("its report's counts do not add up (%d tests, %d failed, %d skipped)", r.Tests, r.Failures, r.Skipped)
	}
	return r, nil
}
