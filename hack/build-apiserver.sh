#!/usr/bin/env bash
# Builds the Kubernetes binaries of the live tests (test/cluster) from
# k8s.io/kubernetes in the nested module hack/apiserver, into the tool cache:
#
#   kube-apiserver            hack/apiserver/main.go
#   kube-controller-manager   hack/apiserver/kube-controller-manager
#   kube-scheduler            hack/apiserver/kube-scheduler
#   kubectl.v1.37.2           hack/apiserver/kubectl (a client within the
#                             supported skew; not named kubectl, so that the
#                             kubectl on PATH stays the machine's, and not
#                             kubectl-*, which kubectl would take for a plugin)
#   etcd.v3.6.16              hack/etcd, a module of its own (go.etcd.io/etcd/server/v3)
#
# Each build is skipped when the cached binary exists and its stamp (hash of
# its module's go.mod and go.sum and the command's main.go) matches. The
# Kubernetes four share one module, so the later builds reuse the Go build
# cache of the first. On 2 cores (shared) with an empty Go build cache:
# kube-apiserver 20 min (1203 s measured), then kube-controller-manager 585 s,
# kube-scheduler 30 s and kubectl 91 s (12 min together), etcd 305 s; kwok
# (hack/install-tools.sh) about 5 min. With every stamp current, under a
# second.
#
# Usage: hack/build-apiserver.sh [-f] [NAME...]   (-f forces a rebuild; NAMEs
#        pick binaries, default all)
# Env:   KINJECT_CACHE (default $HOME/.cache/kubectl-inject)
set -euo pipefail

KUBE_VERSION=v1.37.2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${KINJECT_CACHE:-${HOME}/.cache/kubectl-inject}"

# name|module directory in hack|package directory in the module
binaries=(
  "kube-apiserver|apiserver|."
  "kube-controller-manager|apiserver|kube-controller-manager"
  "kube-scheduler|apiserver|kube-scheduler"
  "kubectl.${KUBE_VERSION}|apiserver|kubectl"
  # the real node of test/node: kubelet (+ containerd and CNI from Debian)
  "kubelet|apiserver|kubelet"
  # the control plane's etcd (hack/etcd): v3.6, which serves the watch
  # progress requests kube-apiserver needs for streaming lists
  "etcd.v3.6.16|etcd|."
)

force=0
if [[ "${1:-}" == "-f" ]]; then force=1; shift; fi
wanted=("$@")

major="${KUBE_VERSION#v}"; major="${major%%.*}"
minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
ldflags="-s -w"
# servers report component-base's version, kubectl client-go's
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
  ldflags+=" -X ${pkg}.gitMajor=${major}"
  ldflags+=" -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean"
  ldflags+=" -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

mkdir -p "${cache}/bin"
for b in "${binaries[@]}"; do
  IFS='|' read -r name module dir <<<"${b}"
  src="${root}/hack/${module}"
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" ${name} "* && " ${wanted[*]} " != *" ${name%%.v*} "* ]]; then
    continue
  fi
  bin="${cache}/bin/${name}"
  stampfile="${bin}.stamp"
  stamp="$(cd "${src}" && cat go.mod go.sum "${dir}/main.go" | sha256sum | cut -d' ' -f1)"
  if [[ ${force} == 0 && -x "${bin}" && -f "${stampfile}" && "$(cat "${stampfile}")" == "${stamp}" ]]; then
    echo "${name} up to date" >&2
    echo "${bin}"
    continue
  fi
  echo "building ${name} into ${bin}" >&2
  start=$(date +%s)
  tmp="${bin}.tmp.$$"
  trap 'rm -f "${tmp}"' EXIT
  (cd "${src}" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "${ldflags}" -o "${tmp}" "./${dir}")
  mv -f "${tmp}" "${bin}"
  echo "${stamp}" > "${stampfile}"
  echo "built ${name} in $(( $(date +%s) - start ))s" >&2
  if [[ "${name}" == kubectl* ]]; then
    "${bin}" version --client >&2
  else
    "${bin}" --version >&2
  fi
  echo "${bin}"
done
