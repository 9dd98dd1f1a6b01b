package english

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKubectlsEnglishIsTheIdentity holds the reason regctl loads no
// catalogue: kubectl's English catalogues (the one it loads with no locale
// set, and en_US) translate every string to itself.
func TestKubectlsEnglishIsTheIdentity(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubectl").Output()
	if err != nil {
		t.Fatalf("finding k8s.io/kubectl: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "util", "i18n", "translations", "kubectl")
	for _, lang := range []string{"default", "en_US"} {
		data, err := os.ReadFile(filepath.Join(dir, lang, "LC_MESSAGES", "k8s.po"))
		if err != nil {
			t.Fatal(err)
		}
		entries := 0
		for _, e := range poEntries(t, string(data)) {
			if e.msgid == "" {
				continue // the header
			}
			entries++
			if e.msgstr != e.msgid && e.msgstr != "" {
				t.Errorf("%s translates %q to %q", lang, e.msgid, e.msgstr)
			}
		}
		if entries < 100 {
			t.Errorf("%s: read %d entries, want kubectl's catalogue", lang, entries)
		}
	}
}

type poEntry struct{ msgid, msgstr string }

// poEntries reads the msgid and first msgstr of each entry of a gettext
// catalogue.
func poEntries(t *testing.T, po string) []poEntry {
	t.Helper()
	var out []poEntry
	var cur *string
	var e poEntry
	flush := func() {
		if e != (poEntry{}) {
			out = append(out, e)
		}
		e, cur = poEntry{}, nil
	}
	for _, line := range strings.Split(po, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "msgid "):
			cur = &e.msgid
			line = strings.TrimPrefix(line, "msgid ")
		case strings.HasPrefix(line, "msgstr ") || strings.HasPrefix(line, "msgstr[0] "):
			cur = &e.msgstr
			line = line[strings.Index(line, " ")+1:]
		case strings.HasPrefix(line, "msgid_plural ") || strings.HasPrefix(line, "msgstr["):
			cur = nil
			continue
		}
		if cur != nil && strings.HasPrefix(line, `"`) {
			s, err := strconv.Unquote(line)
			if err != nil {
				t.Fatalf("reading %s: %v", line, err)
			}
			*cur += s
		}
	}
	flush()
	return out
}
