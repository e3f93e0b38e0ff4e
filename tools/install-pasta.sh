#!/usr/bin/env bash
# Installs pasta (Debian's passt package), which links the turn's network
# namespace to the outside world (SPEAR_NETWORK=outbound), where it is
# missing and this runs as root with apt-get (and, given "bench",
# bubblewrap, which make bench compares spear-term with); and, as udev does on a
# desktop, lets every user open /dev/net/tun, which pasta needs for a
# user that is not root. Without pasta the turn's commands reach only
# their own loopback, and spear-capability check says so.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	if ! command -v pasta >/dev/null 2>&1; then
		echo "net: pasta is not installed; as root: apt-get install passt (the network scripts skip meanwhile)" >&2
	fi
	exit 0
fi
want=()
command -v pasta >/dev/null 2>&1 || want+=(passt)
if [ "${1:-}" = bench ] && ! command -v bwrap >/dev/null 2>&1; then
	want+=(bubblewrap)
fi
if [ ${#want[@]} -gt 0 ]; then
	if command -v apt-get >/dev/null 2>&1; then
		echo "net: installing ${want[*]} from Debian's packages" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
	else
		echo "net: ${want[*]} not installed and there is no apt-get; install your system's packages" >&2
		exit 0
	fi
fi
if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
	echo "net: letting every user open /dev/net/tun (mode 0666, as udev sets it)" >&2
	chmod 0666 /dev/net/tun
fi
