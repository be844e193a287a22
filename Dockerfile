# inject-fn: the kubectl-inject KRM function image.
#
# The image holds only static binaries built beforehand (./fn/inject-fn and
# its CEL evaluator ./plugin/kinject-cel, with CGO_ENABLED=0; `make image`
# runs `make build` first), so nothing is compiled or pulled here and the
# build works without network access:
#
#   make image        # docker build of a context holding only what is copied below,
#                     # with --build-arg VERSION and REVISION: the labels carry the
#                     # same version and commit as the binaries (inject-fn --version)
#
# The base is `scratch`: no shell, no package manager, nothing to patch. To
# use another base (for a shell to debug with, or CA certificates), replace
# `FROM scratch` with, for example, `FROM gcr.io/distroless/static-debian12:nonroot`
# or `FROM alpine:3.20`; such bases bring their own /etc/passwd, so the two
# COPY lines for /etc/passwd and /etc/group can go.
FROM scratch

ARG BIN=bin/inject-fn
ARG HELPER=bin/kinject-cel
ARG VERSION=v0.0.0-dev
ARG REVISION=unknown

LABEL org.opencontainers.image.title="inject-fn" \
      org.opencontainers.image.description="KRM function that adds a sidecar (Envoy by default) to pod templates; part of kubectl-inject" \
      org.opencontainers.image.source="https://github.com/kinject/kubectl-inject" \
      org.opencontainers.image.url="https://github.com/kinject/kubectl-inject" \
      org.opencontainers.image.documentation="https://github.com/kinject/kubectl-inject/tree/main/examples" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

# kpt and kustomize run functions with `docker run --user nobody`, which
# needs the user in /etc/passwd.
COPY fn/image/passwd /etc/passwd
COPY fn/image/group /etc/group
COPY ${BIN} /inject-fn
# inject-fn runs it beside itself for the expressions beyond the core's own.
COPY ${HELPER} /kinject-cel

USER 65534:65534
ENTRYPOINT ["/inject-fn"]
