#!/usr/bin/env bash
# Mutation testing: runs gremlins (pinned, installed into the tool cache
# from the Go module proxy on first use) over the packages whose tests
# guard the rules the core and the admission policy share, and reports the
# mutants that survive (LIVED: a test ran the code and passed anyway; NOT
# COVERED: no test of the package runs it). gremlins runs each package's
# own tests for each mutant, so a package tested only from elsewhere
# (internal/envoycheck from test/envoy) scores as uncovered.
#
# Usage: hack/mutate.sh [--since REF] [PACKAGE|FILE...]
#        (default: every package of the gate below)
#        A FILE (pkg/inject/policy.go) mutates that file only, with its package's tests.
#        --since REF mutates only the lines changed since REF (git diff
#        --merge-base REF, uncommitted changes included), and leaves out a
#        package none of whose own files changed; .ci/run gives it the
#        commit of hack/mutate-base, where the gate was last measured whole.
#
# The gate: each package (or a file of it) must reach its minimum test
# efficacy (killed / (killed + lived)), listed in hack/mutate-gate.txt;
# below it, gremlins exits non-zero and so does this script, after every
# target has run.
# Env:   MUTATE_WORKERS (default 1), MUTATE_TIMEOUT_COEFFICIENT (default 10):
#        gremlins gives each mutant the coverage run's time times this; a
#        package whose tests take a second (pkg/yamltext) is rebuilt for
#        each mutant in longer than that, and at 3 every mutant of a file
#        of it timed out (counted as neither killed nor lived).
set -euo pipefail

version=v0.6.0
cache="${KINJECT_CACHE:-${HOME}/.cache/kubectl-inject}"
bin="${cache}/bin/gremlins"
if [[ ! -x "${bin}" || "$(go version -m "${bin}" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')" != "${version}" ]]; then
  echo "installing github.com/go-gremlins/gremlins/cmd/gremlins@${version}" >&2
  mkdir -p "${cache}/bin"
  GOBIN="${cache}/bin" CGO_ENABLED=0 go install "github.com/go-gremlins/gremlins/cmd/gremlins@${version}"
fi

cd "$(dirname "$0")/.."
# gremlins times each mutant's tests against the coverage run: a coverage
# run answered from the test cache would make every mutant time out. go
# test would vet each mutant's package too: a mutant is killed by a test,
# not by vet, and vet's run is time each mutant spends for nothing.
export GOFLAGS="$(go env GOFLAGS) -count=1 -vet=off"
gate="${MUTATE_GATE:-hack/mutate-gate.txt}"
since=""
if [[ "${1:-}" == --since ]]; then
  [[ -n "${2:-}" ]] || { echo "--since needs a commit" >&2; exit 2; }
  since="$(git rev-parse --verify --quiet "${2}^{commit}")" || { echo "--since ${2}: not a commit of this repository" >&2; exit 2; }
  shift 2
fi
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || mapfile -t targets < <(awk '!/^#/ && NF { print $1 }' "${gate}")
status=0
out="$(mktemp)"
trap 'rm -f "${out}"' EXIT
for target in "${targets[@]}"; do
  dir="${target}" keep=""
  if [[ "${target}" == *.go ]]; then dir="$(dirname "${target}")" keep="$(basename "${target}")"; fi
  # gremlins walks the directories below the package too: leave them (other
  # packages) out, and with a FILE every other file of the package.
  excludes=()
  # gremlins matches -E against paths relative to the package's directory.
  for sub in "${dir}"/*/; do [[ -d "${sub}" ]] && excludes+=(-E "^${sub#"${dir}"/}"); done
  if [[ -n "${keep}" ]]; then
    for f in "${dir}"/*.go; do [[ "$(basename "${f}")" == "${keep}" ]] || excludes+=(-E "(^|/)$(basename "${f}")\$"); done
  fi
  diffargs=()
  if [[ -n "${since}" ]]; then
    # The package's own Go files (its tests aside) changed since the base:
    # gremlins mutates every line when its diff is empty, so a package
    # without one is left out here.
    changed="$(cd "${dir}" && git diff --merge-base "${since}" --name-only --relative -- . |
      awk -v k="${keep}" '!/\// && /\.go$/ && !/_test\.go$/ && (k == "" || $0 == k)')"
    if [[ -z "${changed}" ]]; then
      echo "== ${target}: no change since ${since:0:12}"
      continue
    fi
    diffargs=(-D "${since}")
  fi
  minimum="$(awk -v p="${dir}" '!/^#/ && $1 == p { print $2 }' "${gate}")"
  [[ -n "${minimum}" ]] || { echo "${dir}: no minimum efficacy in ${gate}" >&2; exit 2; }
  echo "== ${target} (minimum efficacy ${minimum}%)"
  # -S lc: print the surviving mutants only (lived, not covered).
  # gremlins is run from the package's directory, given its absolute path
  # (it finds the module from there), with git's diffs relative to it: it
  # matches the files of a diff by their paths from the package.
  (cd "${dir}" && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
    "${bin}" unleash --workers "${MUTATE_WORKERS:-1}" --timeout-coefficient "${MUTATE_TIMEOUT_COEFFICIENT:-10}" \
    -S lc "${diffargs[@]}" "${excludes[@]}" "${PWD}") | tee "${out}" || status=1
  # gremlins v0.6.0 exits 0 below its own --threshold-efficacy: the gate
  # reads the efficacy it prints.
  efficacy="$(sed -n 's/^Test efficacy: \([0-9.]*\)%.*/\1/p' "${out}" | tail -1)"
  if grep -q '^Killed: 0, Lived: 0,' "${out}"; then
    # Nothing the package's tests run was mutated (only lines no test
    # covers, or none at all on the changed lines): no efficacy to hold.
    echo "== ${target}: no mutant its tests run${since:+ on the lines changed since ${since:0:12}}"
  elif [[ -z "${efficacy}" ]]; then
    echo "== ${target}: gremlins printed no efficacy" >&2
    status=1
  elif awk -v e="${efficacy}" -v m="${minimum}" 'BEGIN { exit !(e < m) }'; then
    echo "== ${target}: efficacy ${efficacy}% is below the gate's ${minimum}%" >&2
    status=1
  else
    echo "== ${target}: efficacy ${efficacy}% (gate ${minimum}%)"
  fi
done
exit "${status}"
