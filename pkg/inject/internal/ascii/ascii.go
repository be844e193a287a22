// Package ascii holds the byte classes the core's grammars are written
// with (names, ints, the CEL subset's tokens), so that each is spelled
// once: checks run over bytes, without compiling a regular expression at
// every start.
package ascii

import "strings"

// IsDigit reports whether c is 0-9.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// IsLowerAlnum reports whether c is a-z or 0-9.
func IsLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || IsDigit(c) }

// IsAlnum reports whether c is a letter or a digit.
func IsAlnum(c byte) bool { return IsLowerAlnum(c) || c >= 'A' && c <= 'Z' }

// IsHexDigit reports whether c is a hexadecimal digit.
func IsHexDigit(c byte) bool { return IsDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// IsDecimalInt reports whether s is -?(0|[1-9][0-9]{0,17}): a plain
// decimal int that fits in an int64, the int grammar of parameters and of
// the policy's pattern for them.
func IsDecimalInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s == "0" || len(s) >= 1 && len(s) <= 18 && s[0] != '0' && All(s, IsDigit)
}

// All reports whether every byte of s is ok.
func All(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// EqualFold reports whether a and b are equal without ASCII case, as CEL's
// lowerAscii compares them: no other letter folds (strings.EqualFold
// takes "ſ" for "s", which the API server's CEL does not).
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
