#!/usr/bin/env bash
# cross-test.sh — cross-build and run a Rust crate's tests under qemu-user.
#
# Usage (from the crate root):
#   cross-test.sh <aarch64|s390x> [extra cargo test args...]
# Runs:  cargo test --target <triple> --lib --tests "$@"
#
# The compiler is Debian's `rustc-web` (no rustup targets needed): the newest
# Debian version that ships a std for the target is picked (1.96 from
# bookworm-security for arm64, 1.85 from bookworm for s390x), downloaded with
# `apt-get download` against a private lists folder (the system's apt state and
# architectures are never changed) and unpacked with `dpkg -x` into
#   ${PBWIRE_CROSS_CACHE:-$HOME/.cache/pbwire-cross}/<arch>
# Cargo is whatever `cargo` is on PATH (rustup honours rust-toolchain.toml);
# RUSTC points it at a wrapper around the Debian rustc. Doctests are not run.
#
# Environment knobs (all optional):
#   PBWIRE_CROSS_CACHE         cache root (default $HOME/.cache/pbwire-cross)
#   PBWIRE_CROSS_RUST_VERSION  exact Debian version of rustc-web to use
#                              (e.g. 1.85.0+dfsg3-1~deb12u3 to test aarch64 at the s390x MSRV)
#   PBWIRE_CROSS_REFRESH=1     ignore the ready marker and set up again
#   PBWIRE_CROSS_SOURCES_LIST  an apt sources.list file to use instead of the system's
set -Eeuo pipefail

ARCH="${1:-}"
PFX="[cross ${ARCH:-?}]"
log() { printf '%s %s\n' "$PFX" "$*" >&2; }
die() { printf '%s ERROR: %s\n' "$PFX" "$*" >&2; exit 1; }
trap 'rc=$?; printf "%s FAILED (exit %s) at line %s: %s\n" "$PFX" "$rc" "$LINENO" "$BASH_COMMAND" >&2' ERR

case "$ARCH" in
  aarch64) TRIPLE=aarch64-unknown-linux-gnu; DEBARCH=arm64; GNU=aarch64-linux-gnu; QEMU=qemu-aarch64 ;;
  s390x)   TRIPLE=s390x-unknown-linux-gnu;   DEBARCH=s390x; GNU=s390x-linux-gnu;   QEMU=qemu-s390x ;;
  -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
  *) printf 'usage: %s <aarch64|s390x> [extra cargo test args...]\n' "$0" >&2; exit 2 ;;
esac
shift

T0=$SECONDS
export DEBIAN_FRONTEND=noninteractive
CACHE_ROOT="${PBWIRE_CROSS_CACHE:-${HOME:-/root}/.cache/pbwire-cross}"
CACHE="$CACHE_ROOT/$ARCH"
MARKER="$CACHE/.ready"
WRAPPER="$CACHE/bin/rustc"
mkdir -p "$CACHE"

[[ -f Cargo.toml ]] || die "no Cargo.toml in $(pwd): run this from the crate root"

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=(sudo -n); fi
fi

# Serialise concurrent runs for the same arch (they share the cache).
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.lock"
  flock -w 1800 9 || die "could not lock $CACHE/.lock"
fi

# ---------------------------------------------------------------- host tools
APT_UPDATED=0
sys_apt_install() {  # install Debian packages into the system (only called when missing)
  if [[ $(id -u) -ne 0 && ${#SUDO[@]} -eq 0 ]]; then
    die "need root to run: apt-get install -y $*"
  fi
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update (system)"
    "${SUDO[@]}" apt-get update -qq </dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null \
    || die "apt-get install $* failed"
}
pkg_ok() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

need=()
command -v "$GNU-gcc" >/dev/null || need+=("gcc-$GNU")
pkg_ok "libc6-dev-$DEBARCH-cross" || need+=("libc6-dev-$DEBARCH-cross")
command -v "$QEMU" >/dev/null || need+=(qemu-user)
command -v dpkg-deb >/dev/null || need+=(dpkg)
if [[ ${#need[@]} -gt 0 ]]; then sys_apt_install "${need[@]}"; else log "host tools present ($GNU-gcc, $QEMU)"; fi
command -v "$GNU-gcc" >/dev/null || die "$GNU-gcc still missing"
command -v "$QEMU" >/dev/null || die "$QEMU still missing"
QEMU_LD="/usr/$GNU"
[[ -d $QEMU_LD/lib ]] || die "$QEMU_LD/lib missing (libc6-$DEBARCH-cross?)"

# ---------------------------------------------------------- Debian toolchain
toolchain_works() {
  [[ -x $WRAPPER ]] && "$WRAPPER" -vV >/dev/null 2>&1
}

setup_toolchain() {
  local apt_dir="$CACHE/apt" debs="$CACHE/debs" root_new="$CACHE/root.new" root="$CACHE/root"
  rm -f "$MARKER"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/empty.d" "$debs"
  local APT=(-oAPT::Architectures="amd64,$DEBARCH" -oDir::State::Lists="$apt_dir/lists"
             -oDir::Cache="$apt_dir/cache" -oDir::Cache::pkgcache= -oDir::Cache::srcpkgcache=
             -oAPT::Sandbox::User=root -oAcquire::Languages=none -oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false)
  if [[ -n ${PBWIRE_CROSS_SOURCES_LIST:-} ]]; then
    [[ -f $PBWIRE_CROSS_SOURCES_LIST ]] || die "PBWIRE_CROSS_SOURCES_LIST=$PBWIRE_CROSS_SOURCES_LIST not found"
    APT+=(-oDir::Etc::SourceList="$PBWIRE_CROSS_SOURCES_LIST" -oDir::Etc::SourceParts="$apt_dir/empty.d")
  fi

  log "apt-get update into private lists ($apt_dir/lists, archs amd64,$DEBARCH)"
  if ! apt-get "${APT[@]}" -qq update </dev/null >"$apt_dir/update.log" 2>&1; then
    log "warning: apt-get update reported errors (continuing; see $apt_dir/update.log):"
    grep -E '^(E|W):' "$apt_dir/update.log" | head -5 >&2 || true
  fi

  # Pick the newest rustc-web version whose libstd-rust-web-dev exists for the target arch.
  local ver="${PBWIRE_CROSS_RUST_VERSION:-}" v have_t
  have_t=$(apt-cache "${APT[@]}" madison "libstd-rust-web-dev:$DEBARCH" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}')
  if [[ -z $ver ]]; then
    while read -r v; do
      [[ -n $v ]] || continue
      grep -qxF -- "$v" <<<"$have_t" || continue
      if [[ -z $ver ]] || dpkg --compare-versions "$v" gt "$ver"; then ver=$v; fi
    done < <(apt-cache "${APT[@]}" madison rustc-web:amd64 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}')
    [[ -n $ver ]] || die "no rustc-web version with libstd-rust-web-dev:$DEBARCH found in the configured apt sources (need bookworm / bookworm-security; set PBWIRE_CROSS_SOURCES_LIST?)"
  else
    grep -qxF -- "$ver" <<<"$have_t" || die "libstd-rust-web-dev:$DEBARCH=$ver not available"
  fi

  # libstd-rust-web-1.NN (from the -dev package's Depends) and libllvmNN (from its Depends).
  local stdpkg llvmpkg llvmver
  stdpkg=$(apt-cache "${APT[@]}" show "libstd-rust-web-dev:amd64=$ver" | sed -n 's/^Depends: //p' | head -1 | grep -o 'libstd-rust-web-[0-9.]*' | head -1)
  [[ -n $stdpkg ]] || die "could not find the libstd-rust-web-1.NN package for $ver"
  llvmpkg=$(apt-cache "${APT[@]}" show "$stdpkg:amd64=$ver" | sed -n 's/^Depends: //p' | head -1 | grep -o 'libllvm[0-9]*' | head -1)
  [[ -n $llvmpkg ]] || die "could not find the libllvmNN dependency of $stdpkg=$ver"
  llvmver=$(apt-cache "${APT[@]}" policy "$llvmpkg:amd64" | sed -n 's/^ *Candidate: //p')
  [[ -n $llvmver && $llvmver != "(none)" ]] || die "no candidate for $llvmpkg"
  log "using rustc-web=$ver ($stdpkg, $llvmpkg=$llvmver)"

  # The host (amd64) shared-library deps of libLLVM must be installed on the system.
  local dep missing=()
  for dep in $(apt-cache "${APT[@]}" show "$llvmpkg:amd64=$llvmver" | sed -n 's/^Depends: //p' | head -1 \
                 | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/ //g'); do
    [[ -n $dep ]] && ! pkg_ok "$dep" && missing+=("$dep")
  done
  [[ ${#missing[@]} -eq 0 ]] || sys_apt_install "${missing[@]}"

  local pkgs=("rustc-web:amd64=$ver" "libstd-rust-web-dev:amd64=$ver" "libstd-rust-web-dev:$DEBARCH=$ver"
              "$stdpkg:amd64=$ver" "$llvmpkg:amd64=$llvmver")
  # ($stdpkg:$DEBARCH only holds the target's own librustc_driver .so; the target std
  #  rlibs are in libstd-rust-web-dev:$DEBARCH, so it is not needed.)
  log "downloading ${#pkgs[@]} .debs into $debs"
  rm -f "$debs"/*.deb
  (cd "$debs" && apt-get "${APT[@]}" -qq download "${pkgs[@]}" </dev/null) || die "apt-get download failed"

  log "unpacking with dpkg -x"
  rm -rf "$root_new"; mkdir -p "$root_new"
  local f
  for f in "$debs"/*.deb; do dpkg -x "$f" "$root_new"; done
  [[ -x $root_new/usr/bin/rustc ]] || die "usr/bin/rustc missing after unpacking"
  rm -rf "$root"; mv "$root_new" "$root"
  rm -f "$debs"/*.deb   # keep the cache small; the unpacked tree is what we use

  # Wrapper: RUSTC must be one program. LD_LIBRARY_PATH for librustc_driver + libLLVM.
  local llvmnum=${llvmpkg#libllvm}
  mkdir -p "$CACHE/bin"
  cat >"$WRAPPER.tmp" <<EOF
#!/bin/sh
# generated by cross-test.sh: Debian rustc-web $ver for $TRIPLE
R='$root'
LD_LIBRARY_PATH="\$R/usr/lib/x86_64-linux-gnu:\$R/usr/lib/llvm-$llvmnum/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "\$R/usr/bin/rustc" @SYSROOT@"\$@"
EOF
  sed 's|@SYSROOT@||' "$WRAPPER.tmp" >"$WRAPPER"; chmod +x "$WRAPPER"
  "$WRAPPER" -vV >/dev/null || die "Debian rustc does not start (missing shared libs?): $(ldd "$root/usr/bin/rustc" 2>&1 | grep 'not found' || true)"

  # Make sure rustc finds its own sysroot and the target std; else pin --sysroot.
  local tlib
  tlib=$("$WRAPPER" --print target-libdir --target "$TRIPLE")
  if [[ $("$WRAPPER" --print sysroot) != "$root/usr" ]] || ! compgen -G "$tlib/libstd-*.rlib" >/dev/null; then
    log "rustc does not find its sysroot by itself; adding --sysroot $root/usr"
    sed "s|@SYSROOT@|--sysroot \"\$R/usr\" |" "$WRAPPER.tmp" >"$WRAPPER"; chmod +x "$WRAPPER"
    tlib=$("$WRAPPER" --print target-libdir --target "$TRIPLE")
  fi
  rm -f "$WRAPPER.tmp"
  compgen -G "$tlib/libstd-*.rlib" >/dev/null || die "no std for $TRIPLE in $tlib"
  log "sysroot $("$WRAPPER" --print sysroot), target libdir ok"

  # Smoke test: compile, link and run a hello world under qemu.
  local smoke="$CACHE/smoke"
  rm -rf "$smoke"; mkdir -p "$smoke"
  printf 'fn main() { println!("smoke ok: {} {}", std::env::consts::ARCH, if cfg!(target_endian = "big") { "big-endian" } else { "little-endian" }); }\n' >"$smoke/main.rs"
  "$WRAPPER" --edition 2021 --target "$TRIPLE" -C linker="$GNU-gcc" -o "$smoke/hello" "$smoke/main.rs" \
    || die "smoke compile/link for $TRIPLE failed"
  local out
  out=$("$QEMU" -L "$QEMU_LD" "$smoke/hello") || die "smoke binary failed under $QEMU"
  log "$out"
  rm -rf "$smoke"

  rm -rf "$apt_dir/lists" "$apt_dir/cache"   # only needed during setup
  printf 'rustc_web=%s\nllvm=%s=%s\ntriple=%s\n' "$ver" "$llvmpkg" "$llvmver" "$TRIPLE" >"$MARKER"
}

want_ver="${PBWIRE_CROSS_RUST_VERSION:-}"
if [[ ${PBWIRE_CROSS_REFRESH:-0} != 1 && -f $MARKER ]] && toolchain_works \
   && { [[ -z $want_ver ]] || grep -qxF "rustc_web=$want_ver" "$MARKER"; }; then
  log "toolchain cached ($(sed -n 's/^rustc_web=//p' "$MARKER")), skipping download"
else
  t=$SECONDS
  log "setting up Debian rustc-web toolchain in $CACHE"
  setup_toolchain
  log "toolchain ready in $((SECONDS - t))s"
fi

RUSTC_RELEASE=$("$WRAPPER" -vV | sed -n 's/^release: //p')
log "rustc: $("$WRAPPER" --version)"

# ----------------------------------------------------------------- cargo test
CARGO=${CARGO:-cargo}
CARGO_VER=$("$CARGO" --version) || die "'$CARGO --version' failed (is the toolchain pinned by rust-toolchain.toml installed?)"
log "cargo: $CARGO_VER"

# rust-version above the Debian rustc's release -> --ignore-rust-version (unless given).
extra=()
rv_max=$("$CARGO" metadata --no-deps --format-version 1 2>/dev/null \
          | grep -o '"rust_version":"[^"]*"' | cut -d'"' -f4 | sort -V | tail -1 || true)
if [[ -n $rv_max ]] && [[ $(printf '%s\n%s\n' "$rv_max" "$RUSTC_RELEASE" | sort -V | tail -1) != "$RUSTC_RELEASE" ]]; then
  if [[ " $* " != *" --ignore-rust-version "* ]]; then
    log "crate rust-version $rv_max > rustc $RUSTC_RELEASE: passing --ignore-rust-version"
    extra+=(--ignore-rust-version)
  fi
fi

TUP=$(tr 'a-z-' 'A-Z_' <<<"$TRIPLE")
export RUSTC="$WRAPPER"
export "CARGO_TARGET_${TUP}_LINKER=$GNU-gcc"
export "CARGO_TARGET_${TUP}_RUNNER=$QEMU -L $QEMU_LD"
log "cargo test --target $TRIPLE --lib --tests ${extra[*]} $*"
"$CARGO" test --target "$TRIPLE" --lib --tests "${extra[@]}" "$@"
log "OK: tests passed on $TRIPLE (rustc $RUSTC_RELEASE under $QEMU) in $((SECONDS - T0))s"
