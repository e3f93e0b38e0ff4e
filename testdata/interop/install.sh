#!/usr/bin/env bash
# Installs the MCP servers the interop tests run, from package-lock.json.
# Where Node.js or npm is missing and this runs as root with apt-get, it
# installs Debian's nodejs and npm first.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "interop: installing Node.js and npm from Debian's packages" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	else
		echo "interop: Node.js and npm are needed for the interop tests; install them (or run make test-short)" >&2
		exit 1
	fi
fi
npm ci --no-audit --no-fund --loglevel=error
