package node

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ipTableNames are the iptables tables every snapshot records, present
// or not: a table the node creates is a difference too. Tables beyond
// these are recorded when the kernel has them.
var ipTableNames = []string{"filter", "nat", "mangle", "raw", "security"}

// tableSaver is a command that prints every table of one family and
// backend that exists, and only those: naming a table (-t) makes the
// legacy backend load its module, which would change the host.
type tableSaver struct {
	Family, Command string
	// Optional: a machine without the command has no such tables.
	Optional bool
}

// tableSavers cover IPv4 and IPv6, in the machine's iptables (nf_tables
// here) and in the legacy x_tables backend, whose rules the former does
// not show ("iptables-legacy tables present").
var tableSavers = []tableSaver{
	{Family: "iptables", Command: "iptables-save"},
	{Family: "ip6tables", Command: "ip6tables-save"},
	{Family: "iptables-legacy", Command: "iptables-legacy-save", Optional: true},
	{Family: "ip6tables-legacy", Command: "ip6tables-legacy-save", Optional: true},
}

// Table is one iptables table as iptables-save prints it: chains (their
// counters dropped, as they move with traffic) and rules, in order,
// Docker's left out. Absent says why there is none: the kernel lacks
// it, or its command failed.
type Table struct {
	Rules  []string `json:"rules,omitempty"`
	Absent string   `json:"absent,omitempty"`
}

// tableAbsent is why a table missing from its saver's output is absent.
const tableAbsent = "not in the kernel"

// readTables records the tables of every saver, run through save, keyed
// by family and table ("ip6tables nat"). Only a missing command that
// the node needs is an error.
func readTables(save func(command string) (string, error)) (map[string]Table, error) {
	tables := map[string]Table{}
	for _, s := range tableSavers {
		out, err := save(s.Command)
		absent := ""
		switch {
		case errors.Is(err, exec.ErrNotFound) && s.Optional:
			absent = s.Command + " not installed"
		case errors.Is(err, exec.ErrNotFound):
			return nil, fmt.Errorf("read iptables: %s not on PATH (Debian's iptables package has it): %w", s.Command, err)
		case err != nil:
			absent = err.Error()
		}
		parsed := map[string][]string{}
		if absent == "" {
			parsed = parseSave(out)
			absent = tableAbsent
		}
		for name, rules := range parsed {
			tables[s.Family+" "+name] = Table{Rules: rules}
		}
		for _, name := range ipTableNames {
			if _, ok := parsed[name]; !ok {
				tables[s.Family+" "+name] = Table{Absent: absent}
			}
		}
	}
	return tables, nil
}

// runSave runs an iptables-save command; its error carries its stderr.
func runSave(command string) (string, error) {
	cmd := exec.Command(command)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", command, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// counters are a chain's packet and byte counters in iptables-save's
// output (":INPUT ACCEPT [12:3456]"), or a rule's with -c.
var counters = regexp.MustCompile(`(^\[\d+:\d+\] | \[\d+:\d+\]$)`)

// parseSave reads iptables-save's output into its tables' lines: no
// comments, no COMMIT, no counters, no Docker.
func parseSave(text string) map[string][]string {
	tables := map[string][]string{}
	table := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
			tables[table] = []string{}
		case line == "COMMIT":
			table = ""
		// Between tables: comments, with the time of the dump.
		case table == "" || dockerRule(line):
		default:
			tables[table] = append(tables[table], counters.ReplaceAllString(line, ""))
		}
	}
	return tables
}

// dockerRule says whether a chain or rule is Docker's, which changes as
// its containers come and go.
func dockerRule(line string) bool {
	return strings.Contains(line, "DOCKER") || strings.Contains(line, "docker0") || strings.Contains(line, " br-")
}

// diffTables lists, table by table, the lines added (+) and removed (-)
// from before to after, and the tables that came or went.
func diffTables(before, after map[string]Table) []string {
	var out []string
	keys := sortedKeys(before)
	for _, k := range sortedKeys(after) {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	notRecorded := Table{Absent: "not recorded"}
	for _, k := range keys {
		b, ok := before[k]
		if !ok {
			b = notRecorded
		}
		a, ok := after[k]
		if !ok {
			a = notRecorded
		}
		switch {
		case b.Absent != "" && a.Absent != "":
			if b.Absent != a.Absent {
				out = append(out, fmt.Sprintf("%s: absent before (%s), absent now (%s)", k, b.Absent, a.Absent))
			}
			continue
		case b.Absent != "":
			out = append(out, fmt.Sprintf("%s: table added (absent before: %s)", k, b.Absent))
		case a.Absent != "":
			out = append(out, fmt.Sprintf("%s: table gone (%s)", k, a.Absent))
		}
		for _, l := range lineDiff(b.Rules, a.Rules) {
			out = append(out, k+": "+l)
		}
	}
	return out
}

// lineDiff lists the lines to remove from a ("- line") and add ("+
// line") to make b, by their longest common subsequence, so that a rule
// moved is a difference too (their order is what iptables runs).
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	// lcs[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < m; j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}

// Docker's own networks come and go on a shared machine while a node
// runs: its bridges and the veths on them are left out.
var dockerLinkPrefixes = []string{"docker0", "br-"}

func isDocker(link string) bool {
	return slices.ContainsFunc(dockerLinkPrefixes, func(prefix string) bool { return strings.HasPrefix(link, prefix) })
}

// links lists the network interfaces by name, and apart those that are
// Docker's: its bridges and the veths on them.
func links() (names []string, docker map[string]bool, err error) {
	entries, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, nil, fmt.Errorf("list network interfaces: %w", err)
	}
	docker = map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		master, err := os.Readlink(filepath.Join("/sys/class/net", name, "master"))
		if isDocker(name) || err == nil && isDocker(filepath.Base(master)) {
			docker[name] = true
			continue
		}
		names = append(names, name)
	}
	return names, docker, nil
}

// routes lists the IPv4 and IPv6 routes of every routing table, but
// those through Docker's links. A family the kernel lacks is recorded
// as its error, the same before and after.
func routes(docker map[string]bool) []string {
	var out []string
	for _, family := range []string{"-4", "-6"} {
		b, err := exec.Command("ip", family, "route", "show", "table", "all").Output()
		if err != nil {
			out = append(out, fmt.Sprintf("ip %s route: %v", family, err))
			continue
		}
		out = append(out, parseRoutes(string(b), docker)...)
	}
	return out
}

// expires is the lifetime a route learnt from a router advertisement
// counts down.
var expires = regexp.MustCompile(` expires -?\d+sec`)

// parseRoutes reads ip route's output, one route a line, but those
// through a link of docker or named as Docker's.
func parseRoutes(text string, docker map[string]bool) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(expires.ReplaceAllString(line, ""))
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if i := slices.Index(fields, "dev"); i >= 0 && i+1 < len(fields) && (docker[fields[i+1]] || isDocker(fields[i+1])) {
			continue
		}
		out = append(out, line)
	}
	return out
}
