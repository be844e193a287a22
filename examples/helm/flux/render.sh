#!/usr/bin/env bash
# Renders the chart with Helm and injects it with kubectl inject into
# rendered/, which a Flux Kustomization (flux-kustomization.yaml) applies;
# fails when the committed output is stale (someone changed the chart, its
# values or the sidecar template without rendering again). Run it in CI and
# before committing.
#
# Needs: helm 4 (or $HELM; Helm 3 lays out the same objects with other blank
# lines, so render with the Helm your CI pins), kubectl-inject on PATH, git.
set -euo pipefail
cd "$(dirname "$0")"
helm="${HELM:-helm}"

# --skip-tests: Flux would apply the chart's test Pod as a plain Pod and run it.
"${helm}" template web ../charts/web --namespace shop --skip-tests | kubectl-inject --local -f - > rendered/web.yaml

if [[ -n "$(git status --porcelain -- rendered/)" ]]; then
  git --no-pager diff -- rendered/ >&2
  echo "rendered/ is stale: run examples/helm/flux/render.sh and commit the result" >&2
  exit 1
fi
echo "rendered/ is up to date"
