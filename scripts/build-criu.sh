#!/usr/bin/env bash
# Builds CRIU, which runc checkpoints with, from Debian trixie's source (4.1.1) with the fix in
# scripts/criu-patches/, and installs the binary at the path given (decision 0196). Debian 12's
# CRIU (3.17) cannot start on Linux 6.13 and later (their split vDSO), and 4.1.1 cannot dump a
# TCP or UDP socket on 6.16 and later without the patch. The source comes from Debian's archive
# through the trixie deb-src entry, checked against the hash in its signed Sources index; the
# libraries it links are bookworm's -dev packages. Usage: build-criu.sh TARGET [--print-version]
set -euo pipefail
cd "$(dirname "$0")"

target="${1:?usage: build-criu.sh TARGET [--print-version]}"
patches="$PWD/criu-patches"
upstream="4.1.1"
# The version names the patch set, so setup rebuilds when a patch changes and not otherwise.
version="${upstream}+paddock.$(cat "$patches"/*.patch | sha256sum | cut -c1-12)"
if [ "${2:-}" = "--print-version" ]; then
  echo "$version"
  exit 0
fi

build_debs=(
  libbsd-dev libcap-dev libgnutls28-dev libnet1-dev libnftables-dev libnl-3-dev libprotobuf-c-dev
  libprotobuf-dev pkgconf protobuf-c-compiler protobuf-compiler python3-protobuf uuid-dev make
)
missing=()
for package in "${build_debs[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

scratch="$(mktemp -d /var/tmp/paddock-criu-build.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
chown _apt "$scratch" 2>/dev/null || true # apt downloads as _apt
apt-get source -q --print-uris "criu/trixie" | grep -E "\.orig\.tar\." |
  while read -r uri file _size hash; do
    /usr/lib/apt/apt-helper -q download-file "${uri//\'/}" "$scratch/$file" "$hash" >/dev/null
  done
if [ ! -f "$scratch/criu_${upstream}.orig.tar.xz" ]; then
  echo "trixie's criu is no longer upstream ${upstream}: check scripts/criu-patches against it" >&2
  exit 1
fi
mkdir "$scratch/src"
tar -xJf "$scratch/criu_${upstream}.orig.tar.xz" -C "$scratch/src" --strip-components=1
cd "$scratch/src"
for patch in "$patches"/*.patch; do
  patch -p1 -s <"$patch"
done
# GITID is what `criu --version` prints beside the version: setup reads the patch set there.
make -s -j"$(nproc)" GITID="$version" criu >"$scratch/make.log" 2>&1 || {
  cat "$scratch/make.log" >&2
  exit 1
}
mkdir -p "$(dirname "$target")"
install -m 755 criu/criu "$target.new"
mv -f "$target.new" "$target"
