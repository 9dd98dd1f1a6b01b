package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestVersionJSON(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "version", "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, `"kubernetesVersion": "`+releaseVersion+`"`) {
		t.Errorf("output does not name Kubernetes %s:\n%s", releaseVersion, stdout)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not a JSON object of strings: %v\n%s", err, stdout)
	}
	if !regexp.MustCompile(`^v3\.\d+\.\d+`).MatchString(got["etcdVersion"]) {
		t.Errorf("etcdVersion %q, want an etcd v3 module version", got["etcdVersion"])
	}
	for _, key := range []string{"version", "commit", "goVersion", "platform"} {
		if got[key] == "" {
			t.Errorf("%s is empty", key)
		}
	}
}

func TestVersionText(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "version")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), stdout)
	}
	// Values start in one column.
	column := -1
	for _, line := range lines {
		key, value, ok := strings.Cut(line, ": ")
		if !ok || strings.TrimSpace(value) == "" {
			t.Fatalf("line %q is not `key: value`", line)
		}
		start := len(line) - len(strings.TrimLeft(value, " "))
		if column >= 0 && start != column {
			t.Errorf("value of %s starts at column %d, others at %d:\n%s", key, start, column, stdout)
		}
		column = start
	}
	if !strings.Contains(stdout, "kubernetesVersion: "+releaseVersion+"\n") {
		t.Errorf("output does not name Kubernetes %s:\n%s", releaseVersion, stdout)
	}
}

func TestVersionRejectsUnknownFormat(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "version", "-o", "table")
	if code == 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: want a failure and no output", code, stdout)
	}
	if want := "error: unknown output format \"table\": valid values are text|yaml|json\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
