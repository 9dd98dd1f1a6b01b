package render

import (
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// StringList prints strings one at a time, as they are read, so a list of
// any length is printed with flat memory: one per line in a table, or a
// JSON array or YAML sequence, the same documents Print makes of a []string.
type StringList struct {
	w      io.Writer
	format Format
	n      int
}

// NewStringList starts a list in format (table, yaml or json).
func NewStringList(w io.Writer, format Format) *StringList {
	return &StringList{w: w, format: format}
}

// Add prints one string.
func (s *StringList) Add(v string) error {
	defer func() { s.n++ }()
	switch s.format {
	case Table, Wide:
		// A line of a table, escaped as a table's cells are.
		_, err := io.WriteString(s.w, printers.EscapeTerminal(v)+"\n")
		return err
	case JSON:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding json: %w", err)
		}
		sep := ",\n  "
		if s.n == 0 {
			sep = "[\n  "
		}
		_, err = fmt.Fprintf(s.w, "%s%s", sep, b)
		return err
	case YAML:
		out, err := yaml.Marshal([]string{v})
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		_, err = s.w.Write(out)
		return err
	}
	return fmt.Errorf("output format %q cannot print a list of strings", s.format)
}

// Close ends the list document. Call it only when every string has been
// added: a closed document says the list is whole.
func (s *StringList) Close() error {
	var err error
	switch {
	case s.format != JSON && s.format != YAML:
	case s.n == 0:
		_, err = io.WriteString(s.w, "[]\n")
	case s.format == JSON:
		_, err = io.WriteString(s.w, "\n]\n")
	}
	return err
}

// Cut ends a list whose reading stopped early without closing its
// document, as ListWriter.Cut does. Lines of a table have no document, and
// are left as they are.
func (s *StringList) Cut() error {
	return cut(s.w, s.format, s.n)
}

// Fields prints "key: value" lines, the values aligned one space past the
// longest key, as `regctl version` prints its fields.
func Fields(w io.Writer, fields [][2]string) error {
	width := 0
	for _, f := range fields {
		width = max(width, len(f[0])+1)
	}
	for _, f := range fields {
		if _, err := fmt.Fprintf(w, "%-*s %s\n", width, f[0]+":", f[1]); err != nil {
			return err
		}
	}
	return nil
}

// Plural is one when n is 1, many otherwise: "1 object", "2 objects".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
