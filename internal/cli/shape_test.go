package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commandFiles parses the non-test Go files of internal/cli and of every
// command package under it, by directory.
func commandFiles(t *testing.T) (*token.FileSet, map[string][]*ast.File) {
	t.Helper()
	dirs := []string{"."}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasSuffix(e.Name(), "cmd") {
			dirs = append(dirs, e.Name())
		}
	}
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files[dir] = append(files[dir], f)
		}
	}
	if len(files) < 2 {
		t.Fatalf("found no command package beside internal/cli (%d directories)", len(files))
	}
	return fset, files
}

// methods are the methods named name of files, with their receiver's
// name.
func methods(files map[string][]*ast.File, name string) map[*ast.FuncDecl]string {
	out := map[*ast.FuncDecl]string{}
	for _, fs := range files {
		for _, f := range fs {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Name.Name != name || fn.Body == nil {
					continue
				}
				recv := ""
				if names := fn.Recv.List[0].Names; len(names) > 0 {
					recv = names[0].Name
				}
				out[fn] = recv
			}
		}
	}
	return out
}

// root is the identifier an assigned expression starts from: o in o.a,
// o.a.b, o.a[i] and *o.
func root(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// TestValidateOnlyChecks: as in kubectl, Complete fills in the options
// from flags and arguments, and Validate only checks them. A Validate that
// assigns to its options (or to what they hold) is a Complete in disguise,
// and a test calling Validate alone would see options no command line
// gives.
func TestValidateOnlyChecks(t *testing.T) {
	fset, files := commandFiles(t)
	validates := methods(files, "Validate")
	if len(validates) < 10 {
		t.Fatalf("found %d Validate methods in the commands, want one per command", len(validates))
	}
	for fn, recv := range validates {
		if recv == "" || recv == "_" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			var lhs []ast.Expr
			switch s := n.(type) {
			case *ast.AssignStmt:
				lhs = s.Lhs
			case *ast.IncDecStmt:
				lhs = []ast.Expr{s.X}
			}
			for _, e := range lhs {
				if id := root(e); id != nil && id.Name == recv {
					t.Errorf("%s: Validate assigns to its options: fill them in Complete, and only check them in Validate", fset.Position(e.Pos()))
				}
			}
			return true
		})
	}
}
