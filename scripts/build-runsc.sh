#!/usr/bin/env bash
# Builds gVisor's runsc from Debian trixie's source package (the upstream snapshot Debian ships,
# 0.0~20240729) with the fixes in scripts/runsc-patches/, and installs it at the path given
# (decision 0177). Everything comes from Debian's archive through apt: the source through the
# trixie deb-src entry, Go and the Go libraries as trixie .debs unpacked into a scratch directory
# (installing them would upgrade libc6 and systemd from trixie), the C compilers from bookworm.
# Nothing is installed but the binary. Usage: build-runsc.sh TARGET [--print-version]
set -euo pipefail
cd "$(dirname "$0")"

target="${1:?usage: build-runsc.sh TARGET [--print-version]}"
patches="$PWD/runsc-patches"
upstream="0.0~20240729.0"
# The version names the patch set, so setup rebuilds when a patch changes and not otherwise.
patch_sum="$(cat "$patches"/*.patch | sha256sum | cut -c1-12)"
version="${upstream}+paddock.${patch_sum}"
if [ "${2:-}" = "--print-version" ]; then
  echo "$version"
  exit 0
fi

arch="$(dpkg --print-architecture)"
case "$arch" in amd64 | arm64) ;; *)
  echo "runsc is built for amd64 and arm64 only, not $arch" >&2
  exit 1
  ;;
esac

go_debs=(golang-1.24-go golang-1.24-src)
# runsc's imports (the source package's Build-Depends) and their own Go dependencies.
library_debs=(
  golang-dbus-dev golang-github-bits-and-blooms-bitset-dev golang-github-cenkalti-backoff-dev
  golang-github-cilium-ebpf-dev golang-github-coreos-go-systemd-dev golang-github-gofrs-flock-dev
  golang-github-google-btree-dev golang-github-google-subcommands-dev golang-github-kr-pty-dev
  golang-github-mohae-deepcopy-dev golang-github-opencontainers-specs-dev
  golang-github-vishvananda-netlink-dev golang-github-vishvananda-netns-dev golang-gocapability-dev
  golang-golang-x-exp-dev golang-golang-x-mod-dev golang-golang-x-sync-dev golang-golang-x-sys-dev
  golang-golang-x-time-dev golang-google-protobuf-dev
)

scratch="$(mktemp -d /var/tmp/paddock-runsc-build.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
mkdir "$scratch/debs" "$scratch/source" "$scratch/root"
chown _apt "$scratch/debs" "$scratch/source" 2>/dev/null || true # apt downloads as _apt
(cd "$scratch/debs" && apt-get download -q "${go_debs[@]/%//trixie}" "${library_debs[@]/%//trixie}" >/dev/null)
for deb in "$scratch"/debs/*.deb; do
  dpkg-deb -x "$deb" "$scratch/root"
done

# The source: the orig and debian tarballs, each checked against the hash in trixie's signed
# Sources index (the .dsc is not needed: its patches are applied below as dpkg-source would).
apt-get source -q --print-uris golang-gvisor-gvisor/trixie | grep -E "\.(orig|debian)\.tar\." |
  while read -r uri file _size hash; do
    /usr/lib/apt/apt-helper -q download-file "${uri//\'/}" "$scratch/source/$file" "$hash" >/dev/null
  done
if [ ! -f "$scratch/source/golang-gvisor-gvisor_${upstream}.orig.tar.gz" ]; then
  echo "trixie's golang-gvisor-gvisor is no longer upstream ${upstream}: check scripts/runsc-patches against it" >&2
  exit 1
fi
src="$scratch/gopath/src/gvisor.dev/gvisor"
mkdir -p "$src"
tar -xzf "$scratch"/source/*.orig.tar.gz -C "$src" --strip-components=1
tar -xJf "$scratch"/source/*.debian.tar.xz -C "$src"
cd "$src"
while read -r patch; do
  patch -p1 -s <"debian/patches/$patch"
done < <(grep -Ev '^(#|$)' debian/patches/series)
for patch in "$patches"/*.patch; do
  patch -p1 -s <"$patch"
done

# The generated pieces Debian's rules make before the Go build: the vDSO, systrap's signal
# handler, and the eBPF programs of the experimental XDP network mode, which Paddock never
# enables: empty files stand in for them (building them needs clang and libbpf).
gcc -I. -O2 -std=c++11 -fPIC -fno-sanitize=all -fno-stack-protector -shared -nostdlib \
  -Wl,-soname=linux-vdso.so.1 -Wl,--hash-style=sysv -Wl,--no-undefined -Wl,-Bsymbolic \
  -Wl,-z,max-page-size=4096 -Wl,-z,common-page-size=4096 "-Wl,-Tvdso/vdso_$arch.lds" \
  -o "pkg/sentry/loader/vdsodata/vdso_$arch.so" vdso/vdso.cc vdso/vdso_time.cc
python3 vdso/check_vdso.py --check-data "--vdso=pkg/sentry/loader/vdsodata/vdso_$arch.so"
make -s -C pkg/sentry/platform/systrap/sysmsg -f "$src/debian/sysmsg.makefile" "ARCH=$arch" all clean
rm -f pkg/sentry/platform/systrap/sysmsg/*.{c,S,sh}
find runsc tools -name '*.ebpf.c' | while read -r program; do : >"${program%.ebpf.c}_ebpf.o"; done

export GOROOT="$scratch/root/usr/lib/go-1.24" GOPATH="$scratch/gopath:$scratch/root/usr/share/gocode"
export GO111MODULE=off GOTOOLCHAIN=local GOPROXY=off GOCACHE="$scratch/cache" CGO_ENABLED=0
"$GOROOT/bin/go" build -trimpath -ldflags "-s -w -X gvisor.dev/gvisor/runsc/version.version=$version" \
  -o "$scratch/runsc" ./runsc
mkdir -p "$(dirname "$target")"
install -m 755 "$scratch/runsc" "$target.new"
mv -f "$target.new" "$target"
