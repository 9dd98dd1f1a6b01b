package routetable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Load reads the route table in r, yaml or json. name is how errors refer to
// the input (a file name, "stdin").
//
// The format version is checked before the document is decoded strictly, so
// that a table from a newer regctl is reported as such rather than as a list
// of unknown fields.
func Load(r io.Reader, name string) (RouteTable, error) {
	var t RouteTable
	data, err := io.ReadAll(r)
	if err != nil {
		return t, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return t, fmt.Errorf("reading %s: it is empty, not a route table", name)
	}
	var top map[string]json.RawMessage
	if err := yaml.Unmarshal(data, &top); err != nil {
		return t, fmt.Errorf("reading %s: not a route table: %w", name, err)
	}
	if raw, ok := top["formatVersion"]; ok {
		var v int
		if err := json.Unmarshal(raw, &v); err != nil || v < 1 {
			return t, fmt.Errorf("reading %s: formatVersion %s is not a route table format version", name, raw)
		}
		if v > FormatVersion {
			return t, fmt.Errorf("reading %s: the table was written by a newer regctl (format version %d, this regctl reads up to %d): upgrade regctl", name, v, FormatVersion)
		}
	}
	if _, ok := top["routes"]; !ok {
		return t, fmt.Errorf("reading %s: not a route table: it has no %q", name, "routes")
	}
	if _, ok := top["formatVersion"]; !ok {
		return t, fmt.Errorf("reading %s: not a route table: it has no %q (write one with `regctl routes -o yaml`)", name, "formatVersion")
	}
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		return t, fmt.Errorf("reading %s: %w", name, err)
	}
	seen := make(map[string]bool, len(t.Routes))
	for _, r := range t.Routes {
		if r.Path == "" {
			return t, fmt.Errorf("reading %s: a route has no path", name)
		}
		if seen[r.Path] {
			return t, fmt.Errorf("reading %s: path %q is listed twice", name, r.Path)
		}
		seen[r.Path] = true
	}
	return t, nil
}
