package routetable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Document is a route table file of either kind: one of Storage and HTTP is
// set.
type Document struct {
	Storage *RouteTable
	HTTP    *HTTPRouteTable
}

// LoadDocument reads a route table of either kind, yaml or json, and tells
// which it is from its kind field: `regctl routes -o yaml` writes none,
// `regctl routes --http -o yaml` writes HTTPKind.
func LoadDocument(r io.Reader, name string) (Document, error) {
	data, top, err := readTop(r, name)
	if err != nil {
		return Document{}, err
	}
	if kindOf(top) == HTTPKind {
		t, err := decodeHTTP(data, top, name)
		return Document{HTTP: &t}, err
	}
	t, err := decode(data, top, name)
	return Document{Storage: &t}, err
}

// Load reads the route table in r, yaml or json. name is how errors refer to
// the input (a file name, "stdin").
//
// The format version is checked before the document is decoded strictly, so
// that a table from a newer regctl is reported as such rather than as a list
// of unknown fields.
func Load(r io.Reader, name string) (RouteTable, error) {
	data, top, err := readTop(r, name)
	if err != nil {
		return RouteTable{}, err
	}
	if kindOf(top) == HTTPKind {
		return RouteTable{}, fmt.Errorf("reading %s: it is an HTTP route table (`regctl routes --http`), not a route table", name)
	}
	return decode(data, top, name)
}

// LoadHTTP reads the HTTP route table in r, yaml or json, as Load reads a
// route table.
func LoadHTTP(r io.Reader, name string) (HTTPRouteTable, error) {
	data, top, err := readTop(r, name)
	if err != nil {
		return HTTPRouteTable{}, err
	}
	if kindOf(top) != HTTPKind {
		return HTTPRouteTable{}, fmt.Errorf("reading %s: not an HTTP route table: its kind is not %s (write one with `regctl routes --http -o yaml`)", name, HTTPKind)
	}
	return decodeHTTP(data, top, name)
}

// readTop reads a document, yaml or json, as json, and its top-level
// fields, enough to tell its kind. A json document is read as it is: its
// routes then decode many times faster than through yaml.
func readTop(r io.Reader, name string) ([]byte, map[string]json.RawMessage, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil, fmt.Errorf("reading %s: it is empty, not a route table", name)
	}
	if trimmed[0] != '{' {
		if data, err = yaml.YAMLToJSONStrict(data); err != nil {
			return nil, nil, fmt.Errorf("reading %s: not a route table: %w", name, err)
		}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("reading %s: not a route table: %w", name, err)
	}
	return data, top, nil
}

// strict decodes the json document data into v as kube-apiserver decodes
// a request's body strictly: field names as they are written, no unknown
// or duplicate field.
func strict(data []byte, v any) error {
	errs, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func kindOf(top map[string]json.RawMessage) string {
	var kind string
	if raw, ok := top["kind"]; ok {
		_ = json.Unmarshal(raw, &kind)
	}
	return kind
}

// checkTop checks the format version, up to latest, and that the document
// has routes.
func checkTop(top map[string]json.RawMessage, name string, latest int, writer string) error {
	if raw, ok := top["formatVersion"]; ok {
		var v int
		if err := json.Unmarshal(raw, &v); err != nil || v < 1 {
			return fmt.Errorf("reading %s: formatVersion %s is not a route table format version", name, raw)
		}
		if v > latest {
			return fmt.Errorf("reading %s: the table was written by a newer regctl (format version %d, this regctl reads up to %d): upgrade regctl", name, v, latest)
		}
	}
	if _, ok := top["routes"]; !ok {
		return fmt.Errorf("reading %s: not a route table: it has no %q", name, "routes")
	}
	if _, ok := top["formatVersion"]; !ok {
		return fmt.Errorf("reading %s: not a route table: it has no %q (write one with `%s`)", name, "formatVersion", writer)
	}
	return nil
}

func decode(data []byte, top map[string]json.RawMessage, name string) (RouteTable, error) {
	var t RouteTable
	if err := checkTop(top, name, FormatVersion, "regctl routes -o yaml"); err != nil {
		return t, err
	}
	if err := strict(data, &t); err != nil {
		return t, fmt.Errorf("reading %s: %w", name, err)
	}
	for _, r := range t.Routes {
		if r.Path == "" {
			return t, fmt.Errorf("reading %s: a route has no path", name)
		}
	}
	return t, unique(t.Routes, name, "path %q")
}

func decodeHTTP(data []byte, top map[string]json.RawMessage, name string) (HTTPRouteTable, error) {
	var t HTTPRouteTable
	if err := checkTop(top, name, HTTPFormatVersion, "regctl routes --http -o yaml"); err != nil {
		return t, err
	}
	if err := strict(data, &t); err != nil {
		return t, fmt.Errorf("reading %s: %w", name, err)
	}
	for _, r := range t.Routes {
		if r.Path == "" {
			return t, fmt.Errorf("reading %s: a route has no path", name)
		}
		if r.Method == "" {
			return t, fmt.Errorf("reading %s: route %s has no method", name, r.Path)
		}
	}
	return t, unique(t.Routes, name, "route %q")
}

// unique checks that no key is listed twice: routes are matched by key.
func unique[R record](routes []R, name, what string) error {
	seen := make(map[string]bool, len(routes))
	for _, r := range routes {
		if seen[r.key()] {
			return fmt.Errorf("reading %s: "+what+" is listed twice", name, r.key())
		}
		seen[r.key()] = true
	}
	return nil
}
