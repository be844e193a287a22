package inject

// CompiledDefaultDocument is defaultTemplateDocument, for
// TestDefaultTemplateCompiled.
var CompiledDefaultDocument = defaultTemplateDocument

// DefaultTemplateHash is defaultTemplateHash, for
// TestDefaultTemplateCompiled.
const DefaultTemplateHash = defaultTemplateHash
