#!/usr/bin/env bash
# Set up a fresh machine for xqarb: system packages, a virtual environment in .venv, the package.
#   bash scripts/setup.sh          the service (what `xqarb up --demo` needs)
#   bash scripts/setup.sh --dev    plus the test tools and test oracles
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

# System packages: a CJK font to draw the pieces' characters (the demo's and the tests' rendered boards),
# Chromium and its driver for the browser tests of the web pages, valgrind for bench/referee_instructions.py's
# instruction counts, PostgreSQL's server for the shared ledger's contract tests (--dev only; they start their own
# server in a temporary folder, from /usr/lib/postgresql/<version>/bin).
need=()
fc-list 2>/dev/null | grep -qi "Noto Sans CJK\|Noto Serif CJK\|WenQuanYi" || need+=(fonts-noto-cjk fonts-wqy-microhei)
if [ -n "$extras" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
  command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing Debian packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" fontconfig >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
echo "setup: ready (.venv/bin/xqarb)"
