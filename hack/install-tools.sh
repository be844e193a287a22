#!/usr/bin/env bash
# Installs the pinned tools the tests need into ${KINJECT_CACHE}/bin
# (default $HOME/.cache/kubectl-inject/bin) from the Go module proxy (kustomize,
# krew, validate-krew-manifest, Helm 3 and 4 as helm3 and helm4, kwok, which
# simulates the Nodes of the tests' control plane, and metrics-server, which
# the real node's tests run as a host process), and from Debian (apt-get,
# through sudo when not root) when they are missing: etcd, and what the real
# node of test/node runs (containerd, runc, containernetworking-plugins,
# iptables, iproute2, and prometheus, which scrapes its kubelet).
# Idempotent: a tool already at its pinned version is left alone. kpt,
# kubectl and Docker are expected preinstalled (the README's prerequisites);
# a missing Docker daemon is a warning. kube-apiserver is built by
# hack/build-apiserver.sh (with kube-controller-manager, kube-scheduler and
# kubectl).
#
# Usage: hack/install-tools.sh        then  export PATH="$(hack/install-tools.sh --print-bin):$PATH"
set -euo pipefail

cache="${KINJECT_CACHE:-${HOME}/.cache/kubectl-inject}"
bindir="${cache}/bin"
if [[ "${1:-}" == "--print-bin" ]]; then echo "${bindir}"; exit 0; fi
mkdir -p "${bindir}"

# name|package|version. helm3 and helm4 are both built as "helm": each is
# installed into a directory of its own and renamed.
tools=(
  "kustomize|sigs.k8s.io/kustomize/kustomize/v5|v5.8.0"
  "krew|sigs.k8s.io/krew/cmd/krew|v0.4.3"
  "validate-krew-manifest|sigs.k8s.io/krew/cmd/validate-krew-manifest|v0.4.3"
  "helm3|helm.sh/helm/v3/cmd/helm|v3.22.0"
  "helm4|helm.sh/helm/v4/cmd/helm|v4.3.1"
  "kwok|sigs.k8s.io/kwok/cmd/kwok|v0.8.0"
  "metrics-server|sigs.k8s.io/metrics-server/cmd/metrics-server|v0.8.0"
)

# installed_version prints the main module version recorded in a Go binary.
installed_version() {
  go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'
}

for t in "${tools[@]}"; do
  IFS='|' read -r name pkg version <<<"${t}"
  if [[ -x "${bindir}/${name}" && "$(installed_version "${bindir}/${name}")" == "${version}" ]]; then
    echo "${name} ${version} already installed" >&2
    continue
  fi
  echo "installing ${pkg}@${version}" >&2
  ldflags=""
  # krew and helm report their versions from ldflags (otherwise "unknown", or
  # helm's source default).
  [[ "${pkg}" == sigs.k8s.io/krew/* ]] && ldflags="-X sigs.k8s.io/krew/internal/version.gitTag=${version}"
  [[ "${pkg}" == helm.sh/helm/* ]] && ldflags="-X ${pkg%/cmd/helm}/internal/version.version=${version}"
  # metrics-server's --version prints client-go's gitVersion, as its Makefile sets it.
  [[ "${pkg}" == sigs.k8s.io/metrics-server/* ]] && ldflags="-X k8s.io/client-go/pkg/version.gitVersion=${version}"
  gobin="$(mktemp -d)"
  GOBIN="${gobin}" CGO_ENABLED=0 go install -ldflags "${ldflags}" "${pkg}@${version}"
  # go install names a binary after the last path element that is not a
  # major version suffix: sigs.k8s.io/kustomize/kustomize/v5 -> kustomize.
  base="${pkg##*/}"
  [[ "${base}" =~ ^v[0-9]+$ ]] && { base="${pkg%/*}"; base="${base##*/}"; }
  mv "${gobin}/${base}" "${bindir}/${name}"
  rmdir "${gobin}"
done

# From Debian: etcd for the live tests; containerd, runc, the CNI plugins,
# iptables and iproute2 for the real node of test/node (its kubelet is built
# by hack/build-apiserver.sh), and prometheus, which its tests run to scrape
# the kubelet's cAdvisor metrics.
apt_missing=()
command -v etcd >/dev/null 2>&1 || apt_missing+=(etcd-server)
command -v containerd >/dev/null 2>&1 || apt_missing+=(containerd)
command -v runc >/dev/null 2>&1 || apt_missing+=(runc)
[[ -x /usr/lib/cni/bridge ]] || apt_missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || apt_missing+=(iptables)
command -v ip >/dev/null 2>&1 || apt_missing+=(iproute2)
if ((${#apt_missing[@]})); then
  echo "installing ${apt_missing[*]} from apt" >&2
  sudo=""
  [[ "$(id -u)" != 0 ]] && sudo="sudo"
  ${sudo} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq "${apt_missing[@]}" >/dev/null
fi
# prometheus alone, without what it recommends (node-exporter and its
# collectors, which the tests do not run).
if ! command -v prometheus >/dev/null 2>&1; then
  echo "installing prometheus from apt" >&2
  sudo=""
  [[ "$(id -u)" != 0 ]] && sudo="sudo"
  ${sudo} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

# verify: every tool must be present and run.
fail=0
check() {
  local name="$1"; shift
  if ! out="$("$@" 2>&1)"; then
    echo "ERROR: ${name} does not work: $* -> ${out}" >&2
    fail=1
    return
  fi
  echo "ok: ${name}: $(grep -m1 -iE 'v[0-9]+\.[0-9]|version' <<<"${out}" || head -n1 <<<"${out}")" >&2
}
krew_root="$(mktemp -d)"
trap 'rm -rf "${krew_root}"' EXIT
check kustomize "${bindir}/kustomize" version
check krew env KREW_ROOT="${krew_root}" "${bindir}/krew" version
check validate-krew-manifest "${bindir}/validate-krew-manifest" -h
check helm3 "${bindir}/helm3" version --short
check helm4 "${bindir}/helm4" version --short
check kwok "${bindir}/kwok" --version
check metrics-server "${bindir}/metrics-server" --version
check etcd etcd --version
check containerd containerd --version
check runc runc --version
check ctr ctr --version
check prometheus prometheus --version
check kubectl kubectl version --client
check kpt kpt version
# Docker is needed by the image tests only; without a daemon they skip (or fail with CI=true).
if ! out="$(docker version --format '{{.Server.Version}}' 2>&1)"; then
  echo "WARNING: docker: no daemon reachable ($(tail -n1 <<<"${out}")): the image, kpt --image, kustomize container and Argo CD tests will be skipped" >&2
else
  echo "ok: docker: daemon ${out}" >&2
fi
if [[ ${fail} != 0 ]]; then
  echo "ERROR: some tools are missing or broken (see above)" >&2
  exit 1
fi
echo "tools installed in ${bindir}; add it to PATH" >&2
