package podexpr

import "sync"

// compiler is what compiles the expressions the subset's evaluator leaves
// to cel-go: kinject-cel in a helper process unless the program links
// cel-go and says so (Use).
var compiler struct {
	sync.Mutex
	c Compiler
}

// Use makes c the compiler of every expression not yet compiled: a
// program that links cel-go calls Use(celgo.Compile) before its first
// expression, the others run kinject-cel (HelperCompiler).
func Use(c Compiler) {
	compiler.Lock()
	defer compiler.Unlock()
	compiler.c = c
}

func currentCompiler() Compiler {
	compiler.Lock()
	defer compiler.Unlock()
	if compiler.c == nil {
		compiler.c = HelperCompiler()
	}
	return compiler.c
}
