// Package render is the one place where regctl formats output: tables
// (tablewriter), YAML (sigs.k8s.io/yaml) and JSON, and, for objects read
// from etcd, kubectl get's own printers (k8s.io/kubectl, k8s.io/cli-runtime):
// server-side tables, JSONPath, custom columns and Go templates.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// Format is an output format.
type Format string

const (
	Table Format = "table"
	Wide  Format = "wide"
	YAML  Format = "yaml"
	JSON  Format = "json"
	Name  Format = "name"
)

// Tabular is a value that can be shown as a table. Header and Rows are pure:
// they only project the value, so a table is a view of the same data the
// yaml and json formats print.
type Tabular interface {
	Header(wide bool) []string
	Rows(wide bool) [][]string
}

// Described is a value shown as aligned "Field:  value" lines, for one
// thing with many attributes.
type Described interface {
	Fields() [][2]string
}

// Sectioned is a value shown as several tables one after the other, each
// under its title, for a report with parts of different shapes.
type Sectioned interface {
	Sections(wide bool) []Section
}

// Section is one table of a Sectioned value; one with no rows is left out.
type Section struct {
	Title  string
	Header []string
	Rows   [][]string
}

// ParseFormat checks a -o value against the formats a command supports.
func ParseFormat(s string, valid ...Format) (Format, error) {
	for _, f := range valid {
		if Format(s) == f {
			return f, nil
		}
	}
	names := make([]string, len(valid))
	for i, f := range valid {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q: valid values are %s", s, strings.Join(names, "|"))
}

// Print writes v to w in format f.
func Print(w io.Writer, f Format, v any) error {
	switch f {
	case YAML:
		out, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		_, err = w.Write(out)
		return err
	case JSON:
		// Reports are small: encoding/json's indenting is enough here
		// (typedJSON is for the long lists of objects).
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding json: %w", err)
		}
		_, err = w.Write(append(out, '\n'))
		return err
	case Table, Wide:
		switch t := v.(type) {
		case *ObjectTable:
			return t.print(w, f == Wide)
		case Tabular:
			return PrintTable(w, t.Header(f == Wide), t.Rows(f == Wide))
		case Sectioned:
			return printSections(w, t.Sections(f == Wide))
		case Treed:
			return printTree(w, t.Tree())
		case Described:
			rows := make([][]string, 0, len(t.Fields()))
			for _, field := range t.Fields() {
				rows = append(rows, []string{field[0] + ":", field[1]})
			}
			return PrintTable(w, nil, rows)
		}
		return fmt.Errorf("output format %q is not supported here", f)
	}
	// Names are printed object by object, by ListWriter.
	return fmt.Errorf("output format %q is not supported here", f)
}

func printSections(w io.Writer, sections []Section) error {
	first := true
	for _, s := range sections {
		if len(s.Rows) == 0 {
			continue
		}
		if !first {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		first = false
		if s.Title != "" {
			if _, err := io.WriteString(w, printers.EscapeTerminal(s.Title)+"\n"); err != nil {
				return err
			}
		}
		if err := PrintTable(w, s.Header, s.Rows); err != nil {
			return err
		}
	}
	return nil
}

// PrintTable writes a borderless, left-aligned table in the style of
// kubectl get: upper-case headers, columns three spaces apart. Cells hold
// what etcd holds (names, labels, messages, keys), so terminal control
// characters in them are escaped as kubectl escapes them: a value must not
// be able to recolour, move or rewrite the user's terminal.
func PrintTable(w io.Writer, header []string, rows [][]string) error {
	escaped := make([][]string, len(rows))
	for i, row := range rows {
		escaped[i] = make([]string, len(row))
		for j, c := range row {
			escaped[i][j] = printers.EscapeTerminal(c)
		}
	}
	rows = escaped
	padding := tw.CellPadding{Global: tw.Padding{Left: "", Right: "   ", Overwrite: true}}
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    padding,
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    padding,
			},
		}),
	)
	if header != nil {
		table.Header(header)
	}
	if err := table.Bulk(rows); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	// tablewriter pads every cell to its column's width; drop the padding
	// at line ends so output diffs cleanly.
	return writeTrimmed(w, buf.String())
}

// OneLine keeps an error to the single line regctl promises: the commands
// print it after "error: ", and what failed inside a store may span lines.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
