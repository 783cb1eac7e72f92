# The VM both end-to-end harnesses boot (sourced, bash: scripts/e2e-bluez, scripts/e2e-powercut):
# a Debian kernel extracted into the cache (never installed), an initramfs of static busybox and
# the modules PID 1 loads (scripts/e2e/initramfs-init), and the accelerator QEMU can use here.
# Each sets globals its caller reads: e2e_kernel sets kver, e2e_accel sets accel and cpu.

# e2e_kernel CACHE: fetches and extracts the guest kernel into CACHE (kroot/, vmlinuz, kver) once per package.
e2e_kernel() {
  local cache=$1 package fallback
  mkdir -p "$cache"
  # Pinned: Debian's 6.1.0-56 (6.1.192) hit "kernel BUG at lib/list_debug.c:56" in hci_chan_del
  # under bluetoothd here; 6.1.0-47 (6.1.170) has not. Falls back to linux-image-amd64's target.
  package=${E2E_KERNEL:-linux-image-6.1.0-47-amd64}
  if ! apt-cache show "$package" >/dev/null 2>&1; then
    fallback=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
    echo "e2e: $package is not in the apt sources; using $fallback"
    package=$fallback
  fi
  if [ "$(cat "$cache/package" 2>/dev/null)" != "$package" ]; then
    echo "e2e: fetching kernel $package"
    rm -rf "$cache/kroot" "$cache/debs"; mkdir -p "$cache/debs"
    (cd "$cache/debs" && apt-get download "$package" >/dev/null 2>&1 || "${as_root[@]}" apt-get download "$package" >/dev/null)
    dpkg-deb -x "$cache"/debs/*.deb "$cache/kroot"
    kver=$(ls "$cache/kroot/lib/modules")
    depmod -b "$cache/kroot" "$kver"
    cp "$cache/kroot/boot/vmlinuz-$kver" "$cache/vmlinuz"
    rm -rf "$cache/debs"; echo "$kver" > "$cache/kver"; echo "$package" > "$cache/package"
  fi
  kver=$(cat "$cache/kver")
}

# e2e_initramfs CACHE NAME MODULE...: CACHE/NAME.gz, static busybox and MODULE... with what they
# depend on, loaded in that order by scripts/e2e/initramfs-init. One file per NAME, so a harness
# running beside the other does not rewrite the initramfs the other is booting; made in a
# directory of its own and renamed into place, as a run of the same harness may be booting it.
# The aarch64 VM's (E2E_ARCH=arm64) takes its busybox and modules from its own root: E2E_BUSYBOX
# (default this machine's /bin/busybox) and E2E_KROOT (default CACHE/kroot); a compressed module
# (Debian 13's are .ko.xz) is put in uncompressed, for busybox's insmod.
e2e_initramfs() {
  local cache=$1 name=$2 ir kroot=${E2E_KROOT:-$1/kroot}; shift 2
  ir=$(mktemp -d "$cache/$name.XXXXXX.d")
  rm -rf "$ir"; mkdir -p "$ir"/{bin,dev,proc,sys,newroot,mods}
  cp "${E2E_BUSYBOX:-/bin/busybox}" "$ir/bin/busybox"; : > "$ir/mods/order"
  for m in "$@"; do
    modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
  done | awk '!seen[$0]++' | while read -r ko; do
    case $ko in
      *.ko.xz) xz -dc "$ko" > "$ir/mods/$(basename "$ko" .xz)"; basename "$ko" .xz >> "$ir/mods/order" ;;
      *) cp "$ko" "$ir/mods/"; basename "$ko" >> "$ir/mods/order" ;;
    esac
  done
  cp "$E2E_HARNESS/initramfs-init" "$ir/init"
  (cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) > "$ir.gz"
  mv "$ir.gz" "$cache/$name.gz"; rm -rf "$ir"
}

# e2e_accel CACHE: accel=kvm when a stock kernel boots under KVM here, else tcg (E2E_ACCEL forces one).
e2e_accel() {
  accel=${E2E_ACCEL:-auto}
  if [ "$accel" = auto ]; then
    accel=tcg
    # /dev/kvm backed by PVM runs only PVM guest kernels; a stock kernel hangs there.
    if [ ! -d /sys/module/kvm_pvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && \
       timeout 15 qemu-system-x86_64 -M pc -accel kvm -cpu host -m 256 -nodefaults -display none -monitor none \
         -serial stdio -no-reboot -kernel "$1/vmlinuz" -append "console=ttyS0 panic=-1" </dev/null 2>&1 | grep -q -m1 'Linux version'; then
      accel=kvm
    fi
  fi
  # (an if: a function ending in a false `[ … ] &&` returns 1, which ends a caller under set -e)
  if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
}

# e2e_binary TOOL BUILD: bin= the tsgateway under test: E2E_BINARY as it is (scripts/test gives
# the package's release build), else .build/$E2E_CONFIG (default debug), built first when BUILD is 1.
e2e_binary() {
  if [ -n "${E2E_BINARY:-}" ]; then
    bin=$(realpath "$E2E_BINARY")
    [ -x "$bin" ] || { echo "$1: E2E_BINARY=$E2E_BINARY is no executable" >&2; exit 2; }
    return 0
  fi
  local config=${E2E_CONFIG:-debug}
  if [ "$2" = 1 ]; then
    echo "$1: building tsgateway ($config)"
    swift build -c "$config" --product tsgateway 2>&1 | tail -n 1
  fi
  bin=$ROOT/.build/$config/tsgateway
  [ -x "$bin" ] || { echo "$1: $bin is missing; run without --no-build" >&2; exit 2; }
}
