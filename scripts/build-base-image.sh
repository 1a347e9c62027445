#!/usr/bin/env bash
# Builds the base image every template starts from, without a registry: debootstrap a minimal
# Debian bookworm from Debian's archive and import it into Docker.
# With --if-stale, does nothing when the image is already of this script's version.
set -euo pipefail
image="${PADDOCK_BASE_IMAGE:-paddock/base:bookworm}"
# Raise when this script changes what the image holds: hosts then rebuild it, and every template.
version=3
if [ "${1:-}" = "--if-stale" ] &&
  [ "$(docker image inspect -f '{{index .Config.Labels "paddock.base.version"}}' "$image" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
mirror="${PADDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
root="$(mktemp -d /tmp/paddock-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT

echo "debootstrap bookworm into $root (about 30 s)"
debootstrap --variant=minbase --include=ca-certificates,procps,iproute2 bookworm "$root" "$mirror" |
  while read -r line; do printf '  %s\n' "$line"; done
# Debian's security and stable updates too (Chromium, for one, is only current in the security
# suite), applied to the base now and to whatever templates install later.
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${PADDOCK_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
SOURCES
echo "applying Debian's updates"
chroot "$root" apt-get update -q | sed 's/^/  /'
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get upgrade -y -q | sed 's/^/  /'
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
# Images built on this base keep no apt caches: no binary package caches (~40 MB each), and
# downloaded packages are deleted once installed. Dockerfiles still remove the lists they fetch.
cat >"$root/etc/apt/apt.conf.d/90paddock-no-cache" <<'APT'
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
APT
echo "importing as $image"
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' \
  --change "LABEL paddock.base.version=${version}" \
  - "$image"
