package grammar

import (
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
)

// Hand-written checks of the parameters' typed values. They accept
// exactly what the patterns of the parameter types match (ParameterType's
// Pattern; FuzzParameterChecks compares them): the patterns are what an
// admission policy's CEL runs, the checks are what the binaries run,
// without compiling a regular expression at every start.

// IsPort reports whether s is a port: a canonical decimal from 1 to 65535.
func IsPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == s
}

// IsQuantity reports whether s is an override's resource quantity:
// \+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(SUFFIX|[eE][+-]?[0-9]{1,2})?
func IsQuantity(s string) bool {
	s = strings.TrimPrefix(s, "+")
	i := 0
	for i < len(s) && ascii.IsDigit(s[i]) {
		i++
	}
	intDigits := i
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && ascii.IsDigit(s[i]) {
			i++
			fracDigits++
		}
	}
	if intDigits == 0 && fracDigits == 0 {
		return false
	}
	suffix := s[i:]
	if _, _, known := quantitySuffix(suffix); known {
		return true
	}
	if suffix[0] != 'e' && suffix[0] != 'E' {
		return false
	}
	exp := suffix[1:]
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	return exp != "" && len(exp) <= 2 && ascii.All(exp, ascii.IsDigit)
}

// IsImage reports whether s is an image reference: [DOMAIN/]PATH[:TAG][@DIGEST], the distribution reference
// grammar.
func IsImage(s string) bool {
	if name, digest, ok := strings.Cut(s, "@"); ok {
		if !validDigest(digest) {
			return false
		}
		s = name
	}
	if i := strings.LastIndexByte(s, ':'); i > strings.LastIndexByte(s, '/') {
		if !validTag(s[i+1:]) {
			return false
		}
		s = s[:i]
	}
	parts := strings.Split(s, "/")
	if allPathComponents(parts) {
		return true
	}
	return len(parts) > 1 && validDomain(parts[0]) && allPathComponents(parts[1:])
}

func allPathComponents(parts []string) bool {
	for _, p := range parts {
		if !validPathComponent(p) {
			return false
		}
	}
	return true
}

// validPathComponent: [a-z0-9]+(([._]|__|-+)[a-z0-9]+)*
func validPathComponent(p string) bool {
	if p == "" || !ascii.IsLowerAlnum(p[0]) || !ascii.IsLowerAlnum(p[len(p)-1]) {
		return false
	}
	for i := 0; i < len(p); {
		if ascii.IsLowerAlnum(p[i]) {
			i++
			continue
		}
		j := i
		for j < len(p) && !ascii.IsLowerAlnum(p[j]) {
			j++
		}
		switch sep := p[i:j]; {
		case sep == "." || sep == "_" || sep == "__" || strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

// validDomain: host[:port], the host DNS-like labels or an IPv6 address in
// brackets.
func validDomain(d string) bool {
	host, port := d, ""
	bracketed := strings.HasPrefix(d, "[")
	if bracketed {
		end := strings.IndexByte(d, ']')
		if end < 2 || !ascii.All(d[1:end], func(c byte) bool { return ascii.IsHexDigit(c) || c == ':' }) {
			return false
		}
		port = d[end+1:]
	} else if i := strings.IndexByte(d, ':'); i >= 0 {
		host, port = d[:i], d[i:]
	}
	if port != "" && (port[0] != ':' || len(port) == 1 || !ascii.All(port[1:], ascii.IsDigit)) {
		return false
	}
	if bracketed {
		return true
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || !ascii.IsAlnum(label[0]) || !ascii.IsAlnum(label[len(label)-1]) ||
			!ascii.All(label, func(c byte) bool { return ascii.IsAlnum(c) || c == '-' }) {
			return false
		}
	}
	return true
}

// validTag: [a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}
func validTag(t string) bool {
	return len(t) >= 1 && len(t) <= 128 && (ascii.IsAlnum(t[0]) || t[0] == '_') &&
		ascii.All(t, func(c byte) bool { return ascii.IsAlnum(c) || c == '_' || c == '.' || c == '-' })
}

// validDigest: ALGORITHM:HEX, at least 32 hex digits; the algorithm is
// [a-zA-Z][a-zA-Z0-9]* components joined by one of -_+.
func validDigest(d string) bool {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) < 32 || !ascii.All(hex, ascii.IsHexDigit) {
		return false
	}
	start := true // a component starts here
	for i := 0; i < len(algo); i++ {
		c := algo[i]
		switch {
		case start:
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
			start = false
		case strings.IndexByte("-_+.", c) >= 0:
			start = true
		case !ascii.IsAlnum(c):
			return false
		}
	}
	return !start
}

// IsAnnotationName reports whether s is the name part of an annotation key,
// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
func IsAnnotationName(s string) bool {
	return s != "" && ascii.IsAlnum(s[0]) && ascii.IsAlnum(s[len(s)-1]) &&
		ascii.All(s, func(c byte) bool { return ascii.IsAlnum(c) || c == '-' || c == '_' || c == '.' })
}

// DNSLabelPattern is a DNS label (RFC 1123) in RE2: lower-case letters,
// digits and '-' (not at either end), at most 63 characters; what
// IsDNSLabel accepts. The admission policy finds profiles' status
// annotations with it.
const DNSLabelPattern = `[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?`

// IsDNSLabel reports whether s is a DNS label (DNSLabelPattern): a name
// of a container, a volume, a namespace or a profile.
func IsDNSLabel(s string) bool { return len(s) <= 63 && dnsLabelText(s) }

// dnsLabelText reports whether s is a DNS label but for its length.
func dnsLabelText(s string) bool {
	return s != "" && ascii.IsLowerAlnum(s[0]) && ascii.IsLowerAlnum(s[len(s)-1]) &&
		ascii.All(s, func(c byte) bool { return ascii.IsLowerAlnum(c) || c == '-' })
}

// IsDNSSubdomain reports whether s is a DNS subdomain, as Kubernetes
// names most objects: at most 253 characters of DNS labels joined by dots.
func IsDNSSubdomain(s string) bool { return len(s) <= 253 && dnsSubdomainText(s) }

// dnsSubdomainText: lower-case labels of letters, digits and '-' (not at
// either end) joined by dots; the length is the caller's to check.
func dnsSubdomainText(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if !dnsLabelText(label) {
			return false
		}
	}
	return true
}
