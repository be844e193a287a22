package inject

// CompileExpression is compileExpression, for the external tests.
var CompileExpression = compileExpression
