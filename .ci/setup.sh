#!/usr/bin/env bash
# Installs the Debian packages given as arguments, once: packages already
# installed are skipped, so running it again changes nothing.
set -euo pipefail

missing=()
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#@} packages already installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: needs root to install: ${missing[*]} (run 'sudo make setup')" >&2
	exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
