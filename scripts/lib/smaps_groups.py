#!/usr/bin/env python3
"""Resident memory of a process by library family, from a copy of its /proc/PID/smaps.

    python3 scripts/lib/smaps_groups.py SMAPS

Prints KiB resident (Rss) and private dirty (written: relocations, data, heap) per group.
"""

import collections
import re
import sys

GROUPS = [
    ("Swift runtime (libswiftCore, Concurrency, Dispatch, …)", r"libswift|libdispatch|libBlocksRuntime"),
    ("Foundation (the classic API over the two below)", r"/libFoundation\.so"),
    ("FoundationEssentials", r"FoundationEssentials"),
    ("FoundationInternationalization", r"FoundationInternationalization"),
    ("ICU with its data (lib_FoundationICU)", r"FoundationICU"),
    ("FoundationNetworking, libcurl and what libcurl loads (TLS, Kerberos, LDAP, …)",
     r"FoundationNetworking|libcurl|gnutls|libssl|libcrypto|krb5|k5crypto|ldap|lber|sasl|nghttp|idn2|rtmp|ssh2|psl|brotli|"
     r"nettle|hogweed|libgmp|p11-kit|tasn1|unistring|keyutils|com_err|gssapi|libresolv|libffi"),
    ("libstdc++, libgcc", r"libstdc\+\+|libgcc_s"),
    ("libc, libm, ld.so", r"/libc\.so|/libm\.so|ld-linux"),
    ("heap, stacks, anonymous", r"^\[(heap|stack|anon)|^$"),
]


def group_of(name, executable):
    for label, pattern in GROUPS:
        if re.search(pattern, name):
            return label
    if executable and name == executable:
        return "the program's own binary"
    return "other libraries (sqlite, dbus, bluetooth, mosquitto, systemd, …)"


def main():
    resident, dirty = collections.Counter(), collections.Counter()
    current = None
    lines = open(sys.argv[1]).read().splitlines()
    # The first mapping is the program's own binary.
    executable = next((line.split(maxsplit=5)[5] for line in lines if re.match(r"^[0-9a-f]+-", line) and len(line.split()) > 5), None)
    for line in lines:
        mapping = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$", line)
        if mapping:
            current = group_of(mapping.group(1).strip(), executable)
        elif line.startswith("Rss:"):
            resident[current] += int(line.split()[1])
        elif line.startswith("Private_Dirty:"):
            dirty[current] += int(line.split()[1])
    print(f"{'Rss KiB':>8} {'dirty':>6}  (total {sum(resident.values())} KiB resident, {sum(dirty.values())} KiB private dirty)")
    for label, kib in resident.most_common():
        print(f"{kib:8d} {dirty[label]:6d}  {label}")


if __name__ == "__main__":
    main()
