// Package expr builds CEL expressions as a small tree and prints them as
// a reviewer would write them: operator precedence instead of defensive
// parentheses, constants folded (true && x is x, a conditional on a
// constant is one branch, [] + x is x, adjacent string literals joined),
// long expressions folded one operand, item or case per line.
//
// The admission policy compiler (pkg/admission) builds every expression of
// a policy with it, so no fragment that does nothing reaches the policy.
// Raw embeds CEL text that is already an expression (a template's own,
// say), parenthesized so that it binds as one operand.
package expr
