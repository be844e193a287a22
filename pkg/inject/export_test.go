package inject

// CompiledDefaultDocument is defaultTemplateDocument, for
// TestDefaultTemplateCompiled.
var CompiledDefaultDocument = defaultTemplateDocument
