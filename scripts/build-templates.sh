#!/usr/bin/env bash
# Builds paddock/template-<id>:latest from templates/<id>/Dockerfile for every template whose
# image is absent (all of them with --force), on the locally built base image.
set -euo pipefail
cd "$(dirname "$0")/.."
force=false
[ "${1:-}" = "--force" ] && force=true
base="${PADDOCK_BASE_IMAGE:-paddock/base:bookworm}"
for dockerfile in templates/*/Dockerfile; do
  id="$(basename "$(dirname "$dockerfile")")"
  image="paddock/template-${id}:latest"
  if ! $force && docker image inspect "$image" >/dev/null 2>&1; then
    continue
  fi
  echo "building $image"
  if [ -x "templates/$id/prepare.sh" ]; then "templates/$id/prepare.sh"; fi
  DOCKER_BUILDKIT=0 docker build --build-arg "BASE_IMAGE=$base" -t "$image" "templates/$id" 2>&1 |
    grep -v -e '^DEPRECATED' -e 'buildx component' -e 'docs.docker.com/go/buildx' | sed 's/^/  /'
done
