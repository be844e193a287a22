// Command fileuses counts how the files of one Go package use each other, and how many of those uses run
// upward: from a file to a file at a higher level.
//
// A use is a pair of files (A, B) where A names something declared in B (a function, type, method, field,
// variable or constant); each pair counts once, however many names it shares. Test files are left out.
//
// A file's level is its position in one order of the package's files that puts a file after the files it
// uses wherever the uses allow it. Files that use each other in a cycle cannot all be put after each other;
// for them the order is the one that makes the fewest uses run upward, found by the greedy ordering of
// Eades, Lin and Smyth (sinks low, sources high, then the file whose uses most outnumber its users) and then
// by moving one file at a time to its best place until no move helps. Ties go to the file name, so the
// figures are the same on every run. Cyclic counts the uses that lie on a cycle (B also reaches A), which
// no order can place all downward.
//
//	go run ./hack/fileuses ./pkg/inject        # totals
//	go run ./hack/fileuses -v ./pkg/inject     # also the order and every upward use
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "print the order of the files and every upward use")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fileuses [-v] PACKAGE")
		os.Exit(2)
	}
	uses, err := fileUses(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fileuses:", err)
		os.Exit(1)
	}
	report(os.Stdout, uses, *verbose)
}

// listedPackage is the part of `go list -json` this command reads.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// fileUses type-checks the package against its dependencies' export data and returns, for each file, the
// set of other files of the package it uses.
func fileUses(pattern string) (map[string]map[string]bool, error) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	exports := map[string]string{}
	var target listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("reading go list: %w", err)
		}
		exports[p.ImportPath] = p.Export
		target = p // the named package comes last
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range target.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(target.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(target.ImportPath, fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", target.ImportPath, err)
	}
	uses := map[string]map[string]bool{}
	for _, name := range target.GoFiles {
		uses[name] = map[string]bool{}
	}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to && uses[to] != nil {
			uses[from][to] = true
		}
	}
	return uses, nil
}

func report(w io.Writer, uses map[string]map[string]bool, verbose bool) {
	order := layering(uses)
	level := map[string]int{}
	for i, f := range order {
		level[f] = i
	}
	total, upward, cyclic := 0, 0, 0
	var upwardUses []string
	for _, from := range order {
		for _, to := range sortedSet(uses[from]) {
			total++
			if reaches(uses, to, from) {
				cyclic++
			}
			if level[to] > level[from] {
				upward++
				upwardUses = append(upwardUses, fmt.Sprintf("  %s (%d) -> %s (%d)", from, level[from], to, level[to]))
			}
		}
	}
	fmt.Fprintf(w, "files %d, uses %d, upward %d, cyclic %d\n", len(order), total, upward, cyclic)
	if verbose {
		fmt.Fprintln(w, "order, lowest level first:")
		for i, f := range order {
			fmt.Fprintf(w, "  %2d %s\n", i, f)
		}
		fmt.Fprintln(w, "upward uses:")
		fmt.Fprintln(w, strings.Join(upwardUses, "\n"))
	}
}

// layering orders the files lowest level first: the greedy order, then single-file moves while they lower
// the number of upward uses.
func layering(uses map[string]map[string]bool) []string {
	order := greedyOrder(uses)
	for improved := true; improved; {
		improved = false
		for _, f := range slices.Clone(order) {
			i := slices.Index(order, f)
			rest := slices.Delete(slices.Clone(order), i, i+1)
			best, bestCount := i, upwardCount(uses, order)
			for j := 0; j <= len(rest); j++ {
				candidate := slices.Insert(slices.Clone(rest), j, f)
				if c := upwardCount(uses, candidate); c < bestCount {
					best, bestCount = j, c
				}
			}
			if best != i {
				order = slices.Insert(rest, best, f)
				improved = true
			}
		}
	}
	return order
}

// greedyOrder is Eades, Lin and Smyth's heuristic for a small feedback arc set, lowest level first.
func greedyOrder(uses map[string]map[string]bool) []string {
	left := map[string]bool{}
	for f := range uses {
		left[f] = true
	}
	outDegree := func(f string) (n int) {
		for to := range uses[f] {
			if left[to] {
				n++
			}
		}
		return n
	}
	inDegree := func(f string) (n int) {
		for from := range left {
			if uses[from][f] {
				n++
			}
		}
		return n
	}
	var low, high []string
	for len(left) > 0 {
		names := sortedSet(left)
		if i := slices.IndexFunc(names, func(f string) bool { return outDegree(f) == 0 }); i >= 0 {
			low = append(low, names[i]) // uses nothing left: lowest
			delete(left, names[i])
			continue
		}
		if i := slices.IndexFunc(names, func(f string) bool { return inDegree(f) == 0 }); i >= 0 {
			high = append(high, names[i]) // used by nothing left: highest
			delete(left, names[i])
			continue
		}
		best := names[0]
		for _, f := range names[1:] {
			if outDegree(f)-inDegree(f) > outDegree(best)-inDegree(best) {
				best = f
			}
		}
		high = append(high, best)
		delete(left, best)
	}
	slices.Reverse(high)
	return append(low, high...)
}

func upwardCount(uses map[string]map[string]bool, order []string) (n int) {
	level := map[string]int{}
	for i, f := range order {
		level[f] = i
	}
	for from, tos := range uses {
		for to := range tos {
			if level[to] > level[from] {
				n++
			}
		}
	}
	return n
}

func reaches(uses map[string]map[string]bool, from, to string) bool {
	seen := map[string]bool{from: true}
	for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
		for next := range uses[queue[0]] {
			if next == to {
				return true
			}
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	return false
}

func sortedSet(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}
