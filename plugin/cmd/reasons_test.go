package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// TestReasonsOfEveryCommandDocumented fails when docs/selection.md's table
// of every command's codes is not the one reasonRows generates; -update
// rewrites it.
func TestReasonsOfEveryCommandDocumented(t *testing.T) {
	mddoc.Generated(t, "docs/selection.md", "every-reason", reason.Markdown(reasonRows()), *update,
		"go test ./plugin/cmd -run TestReasonsOfEveryCommandDocumented -update")
}

// TestReasonTables walks the source of every package and holds each code
// any command reports to one constant of the one code type and one row:
// a code without a row, a row without a code, a code with two rows, an
// untyped reason constant, or a code written as a literal where it is
// given (a Reason field or a conversion) fails it; so does a code that no
// code gives (named only in its declaration and its row), or that no test
// names.
func TestReasonTables(t *testing.T) {
	t.Parallel()
	declared, names, problems := declaredCodes(t, mddoc.Root())
	for _, p := range problems {
		t.Error(p)
	}
	if len(declared) < 40 {
		t.Fatalf("found %d declared codes: the walk of the source misses them", len(declared))
	}
	rows := map[reason.Code]bool{}
	for _, r := range reasonRows() {
		switch {
		case rows[r.Code]:
			t.Errorf("%s: two rows", r.Code)
		case declared[r.Code] == "":
			t.Errorf("%s: a row without a constant of type reason.Code", r.Code)
		case !codeLike.MatchString(string(r.Code)):
			t.Errorf("%s: not a snake_case code", r.Code)
		case len(r.By) == 0 || r.Outcome == "" || r.When == "":
			t.Errorf("%s: a row without who gives it, its outcome or when", r.Code)
		}
		rows[r.Code] = true
	}
	for code, at := range declared {
		if !rows[code] {
			t.Errorf("%s (%s): declared, but in no table of reasons", code, at)
		}
	}
	given, tested := codeUses(t, mddoc.Root(), names)
	for code, at := range declared {
		if given[code] == 0 {
			t.Errorf("%s (%s): declared, but no code gives it (its constant is named only where it is declared and in its row)", code, at)
		}
		if !tested[code] {
			t.Errorf("%s (%s): no test names it (its constant, or the code in a string): give it a case", code, at)
		}
	}
}

// rowTables are the variables that hold the tables of rows.
var rowTables = map[string]bool{"reasonRules": true, "reasonRows": true, "commandReasonRows": true}

// codeUses reads every Go file below root's pkg, plugin, fn, internal and
// test: how many times each code's constant (names: code by constant name)
// is named in non-test code outside its declaration and its row, and
// whether a test names the constant or holds the code in a string.
func codeUses(t *testing.T, root string, names map[string]reason.Code) (given map[reason.Code]int, tested map[reason.Code]bool) {
	t.Helper()
	given, tested = map[reason.Code]int{}, map[reason.Code]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{"pkg", "plugin", "fn", "internal", "test"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			isTest := strings.HasSuffix(path, "_test.go")
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ValueSpec:
					// a code's declaration does not use it, nor does a
					// table of rows
					for _, name := range n.Names {
						if _, ok := names[name.Name]; ok || rowTables[name.Name] {
							return false
						}
					}
				case *ast.CallExpr:
					// nor does its row, reason.NewRow(code, ...)
					if typeName(n.Fun) == "reason.NewRow" {
						return false
					}
				case *ast.Ident:
					if code, ok := names[n.Name]; ok {
						if isTest {
							tested[code] = true
						} else {
							given[code]++
						}
					}
				case *ast.BasicLit:
					if isTest && n.Kind == token.STRING {
						for _, code := range names {
							if strings.Contains(n.Value, string(code)) {
								tested[code] = true
							}
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return given, tested
}

var (
	// codeLike is the form of a code: snake_case words.
	codeLike = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	// reasonName is the name of a constant that holds a code.
	reasonName = regexp.MustCompile(`^[Rr]eason[A-Z]`)
)

// codeTypes are the spellings of the code type: reason.Code, and its alias
// inject.Reason (Reason inside pkg/inject, Code inside pkg/reason).
var codeTypes = map[string]bool{"reason.Code": true, "inject.Reason": true, "Reason": true, "Code": true}

// declaredCodes reads every non-test Go file below root's pkg, plugin, fn
// and internal: the codes declared as constants of the code type (with
// where, and by constant name), and what breaks the rule of one constant
// per code.
func declaredCodes(t *testing.T, root string) (declared map[reason.Code]string, names map[string]reason.Code, problems []string) {
	t.Helper()
	declared, names = map[reason.Code]string{}, map[string]reason.Code{}
	fset := token.NewFileSet()
	for _, dir := range []string{"pkg", "plugin", "fn", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			at := func(n ast.Node) string { return rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) }
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GenDecl:
					if n.Tok != token.CONST {
						return true
					}
					for _, spec := range n.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, v := range vs.Values {
							lit := stringLiteral(v)
							if lit == "" {
								continue
							}
							switch {
							case codeTypes[typeName(vs.Type)]:
								if earlier := declared[reason.Code(lit)]; earlier != "" {
									problems = append(problems, at(vs)+": "+lit+" is declared again (first at "+earlier+")")
								}
								declared[reason.Code(lit)] = at(vs)
								names[vs.Names[i].Name] = reason.Code(lit)
							case vs.Type == nil && reasonName.MatchString(vs.Names[i].Name) && codeLike.MatchString(lit):
								problems = append(problems, at(vs)+": "+vs.Names[i].Name+" is an untyped reason constant: give it the type reason.Code")
							}
						}
					}
				case *ast.CallExpr:
					if len(n.Args) == 1 && codeTypes[typeName(n.Fun)] && stringLiteral(n.Args[0]) != "" {
						problems = append(problems, at(n)+": the code "+stringLiteral(n.Args[0])+" is converted from a literal: declare it as a constant with a row")
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Reason" && snakeLiteral(n.Value) {
						problems = append(problems, at(n)+": Reason is given the literal "+stringLiteral(n.Value)+": use its constant")
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" && i < len(n.Rhs) && snakeLiteral(n.Rhs[i]) {
							problems = append(problems, at(n)+": Reason is given the literal "+stringLiteral(n.Rhs[i])+": use its constant")
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return declared, names, problems
}

// typeName is a type expression as written: Name or pkg.Name.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}

// stringLiteral is the value of a string literal, "" for anything else.
func stringLiteral(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// snakeLiteral: e is a string literal of two snake_case words or more, as
// a code is written.
func snakeLiteral(e ast.Expr) bool {
	s := stringLiteral(e)
	return strings.Contains(s, "_") && codeLike.MatchString(s)
}
