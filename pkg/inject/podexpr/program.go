package podexpr

// Program is a compiled expression: it evaluates over the Pod as plain
// values (podObject) and gives nil (null), an int64, a string, or another
// value for the types no parameter takes.
type Program = func(object map[string]any) (any, error)

// Compiler compiles an expression's text with cel-go; checked, when not
// empty, is its precompiled checked AST. Its errors are cel-go's.
type Compiler = func(text, checked string) (Program, error)
