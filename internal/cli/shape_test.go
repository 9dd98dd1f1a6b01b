package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The command layer's shape, as kubectl's: a command binds flags into its
// options, Complete fills them in, Validate checks them, and Run makes one
// call into a library below internal/cli, where the work is and is tested.
// These tests read the source of every command package under internal/cli
// (found by walking it: a command added later is guarded without being
// listed), internal/cli's own files, and the mains in cmd/.

// maxFuncLines bounds every function and function literal of the command
// layer but the cobra constructors' own bodies (flags, help text, wiring):
// the work lives in the packages below.
const maxFuncLines = 40

// module is regctl's import path: the libraries a Run calls are under it.
const module = "github.com/regctl/regctl"

// notTheWork are the packages outside internal/cli that a Run calls on the
// way to its library, which are not the library: the assembler that opens
// the session and builds the map, and the printers.
var notTheWork = []string{module + "/internal/cli", module + "/internal/storagemap", module + "/internal/render"}

// commandPackage is a package of the command layer, parsed.
type commandPackage struct {
	dir   string
	files []*ast.File
}

// command tells whether p is one command's package (getcmd, ...), which
// has options with a Run; the root command's has none.
func (p commandPackage) command() bool {
	base := filepath.Base(p.dir)
	return strings.HasSuffix(base, "cmd") && base != "rootcmd"
}

// commandFiles parses the non-test Go files of internal/cli, of every
// command package under it, and of the mains in cmd/.
func commandFiles(t *testing.T) (*token.FileSet, []commandPackage) {
	t.Helper()
	dirs := []string{".", filepath.Join("..", "..", "cmd", "regctl"), filepath.Join("..", "..", "cmd", "gendocs")}
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
	var pkgs []commandPackage
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		p := commandPackage{dir: dir}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.files = append(p.files, f)
		}
		if len(p.files) == 0 {
			t.Fatalf("%s has no Go files", dir)
		}
		pkgs = append(pkgs, p)
	}
	if commands := slices.DeleteFunc(slices.Clone(pkgs), func(p commandPackage) bool { return !p.command() }); len(commands) < 10 {
		t.Fatalf("found %d command packages under internal/cli, want one per command", len(commands))
	}
	return fset, pkgs
}

// receiver is the type name and the variable of fn's receiver; empty for
// a function.
func receiver(fn *ast.FuncDecl) (typ, name string) {
	if fn.Recv == nil {
		return "", ""
	}
	field := fn.Recv.List[0]
	if len(field.Names) > 0 {
		name = field.Names[0].Name
	}
	e := field.Type
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		typ = id.Name
	}
	return typ, name
}

// key names fn in its package: Type.method, or the function's name.
func key(fn *ast.FuncDecl) string {
	if typ, _ := receiver(fn); typ != "" {
		return typ + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// methods are the methods named name of pkgs, with their receiver's
// variable.
func methods(pkgs []commandPackage, name string) map[*ast.FuncDecl]string {
	out := map[*ast.FuncDecl]string{}
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Name.Name != name || fn.Body == nil {
					continue
				}
				_, recv := receiver(fn)
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
	fset, pkgs := commandFiles(t)
	validates := methods(pkgs, "Validate")
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

// cobraConstructor tells whether fn makes a cobra command: it returns a
// *cobra.Command. Its body is flags, help text and wiring, however long.
func cobraConstructor(fn *ast.FuncDecl) bool {
	if fn.Type.Results == nil {
		return false
	}
	for _, r := range fn.Type.Results.List {
		if star, ok := r.Type.(*ast.StarExpr); ok {
			if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "cobra" {
					return true
				}
			}
		}
	}
	return false
}

// TestCommandsStayThin bounds the length of every function of the command
// layer, and of every function literal, the cobra constructors' own bodies
// aside: a command binds flags and calls one function, and the work lives
// in the packages below.
func TestCommandsStayThin(t *testing.T) {
	fset, pkgs := commandFiles(t)
	lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	for _, p := range pkgs {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch fn := n.(type) {
				case *ast.FuncDecl:
					if fn.Body != nil && !cobraConstructor(fn) && lines(fn) > maxFuncLines {
						t.Errorf("%s: %s is %d lines, over %d: move its work out of the command, into the library it calls", fset.Position(fn.Pos()), key(fn), lines(fn), maxFuncLines)
					}
				case *ast.FuncLit:
					if lines(fn) > maxFuncLines {
						t.Errorf("%s: a function literal of %d lines, over %d: move its work out of the command, into the library it calls", fset.Position(fn.Pos()), lines(fn), maxFuncLines)
					}
				}
				return true
			})
		}
	}
}

// imports are the packages a file imports, by the name it calls them.
func imports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		out[name] = p
	}
	return out
}

// work tells whether an import path is a library a command's work is
// done in: regctl's own, below internal/cli, and not one of notTheWork.
func work(importPath string) bool {
	if !strings.HasPrefix(importPath, module+"/internal/") {
		return false
	}
	return !slices.ContainsFunc(notTheWork, func(p string) bool { return importPath == p || strings.HasPrefix(importPath, p+"/") })
}

// TestEveryRunCallsALibrary: each command's Options.Run reaches a library
// below internal/cli (get, writes, scan, ...), in its own body or in the
// functions of its package it calls, so that what a command does is done,
// and tested, there. Opening a session (storagemap) and printing (render)
// are not that call.
func TestEveryRunCallsALibrary(t *testing.T) {
	fset, pkgs := commandFiles(t)
	for _, p := range pkgs {
		if !p.command() {
			continue
		}
		funcs := map[string]*ast.FuncDecl{}
		importsOf := map[*ast.FuncDecl]map[string]string{}
		var runs []*ast.FuncDecl
		for _, f := range p.files {
			names := imports(f)
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				funcs[key(fn)], importsOf[fn] = fn, names
				if typ, _ := receiver(fn); fn.Name.Name == "Run" && strings.HasSuffix(typ, "Options") {
					runs = append(runs, fn)
				}
			}
		}
		if len(runs) == 0 {
			t.Errorf("%s has no Options with a Run: a command's options run through cli.WithOptions", p.dir)
		}
		for _, run := range runs {
			if !reachesWork(run, funcs, importsOf) {
				t.Errorf("%s: %s reaches no library: make its work one call into a package below internal/cli (get, writes, scan, ...), not code in the command", fset.Position(run.Pos()), key(run))
			}
		}
	}
}

// reachesWork tells whether fn, or a function of its package it calls
// (a method through its receiver, or a function by name), calls a
// function of a library (work).
func reachesWork(fn *ast.FuncDecl, funcs map[string]*ast.FuncDecl, importsOf map[*ast.FuncDecl]map[string]string) bool {
	seen := map[*ast.FuncDecl]bool{}
	queue := []*ast.FuncDecl{fn}
	for len(queue) > 0 {
		fn, queue = queue[0], queue[1:]
		if seen[fn] {
			continue
		}
		seen[fn] = true
		typ, recv := receiver(fn)
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || found {
				return !found
			}
			switch f := call.Fun.(type) {
			case *ast.Ident:
				if next, ok := funcs[f.Name]; ok {
					queue = append(queue, next)
				}
			case *ast.SelectorExpr:
				x, ok := f.X.(*ast.Ident)
				switch {
				case !ok:
				case x.Name == recv && recv != "":
					if next, ok := funcs[typ+"."+f.Sel.Name]; ok {
						queue = append(queue, next)
					}
				case work(importsOf[fn][x.Name]):
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
