#!/usr/bin/env bash
# Idempotent set-up: a virtualenv in .venv with the package (editable) and what the tests need.
# A rerun with nothing changed takes about a second: each step is skipped when its inputs
# (pyproject.toml, the labextension sources) are unchanged since the last successful run.
#   scripts/setup.sh            package + local model + dev tools
#   scripts/setup.sh --browser  also Debian's chromium (for the browser tests), PostgreSQL (for the
#                               memory tests on a real server) and Arize Phoenix in .venv-phoenix
#                               (a real OTLP receiver for tests/trace/test_otel_phoenix.py)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.venv
PY=${PYTHON:-python3}
want_browser=0
for a in "$@"; do
  case $a in
    --browser) want_browser=1 ;;
    *) echo "setup.sh: unknown option $a (known: --browser)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtualenv .venv"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
fi

stamp_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }

# The JupyterLab extension first (it installs jupyterlab into .venv if needed), so that the
# package's build hook finds it built and skips its own node build.
scripts/build-labextension.sh

deps_stamp=$(stamp_of pyproject.toml scripts/setup.sh)
if [ "$(cat "$VENV/.deps-stamp" 2>/dev/null)" != "$deps_stamp" ]; then
  say "installing arcana-jupyter with extras local,server,dev,postgres,otel (first time: llama-cpp-python builds from source, ~5 min)"
  "$VENV/bin/pip" install -q -e ".[local,server,dev,postgres,otel]"
  echo "$deps_stamp" > "$VENV/.deps-stamp"
fi

if [ $want_browser = 1 ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
if [ $want_browser = 1 ] && ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "installing Debian's postgresql for the memory tests on a real server"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
# Arize Phoenix, a real OpenTelemetry receiver, in its own virtualenv (its pins must not move ours).
PHX=$ROOT/.venv-phoenix
PHOENIX_SPEC="arize-phoenix>=20,<21"
if [ $want_browser = 1 ] && [ "$(cat "$PHX/.stamp" 2>/dev/null)" != "$PHOENIX_SPEC" ]; then
  say "installing Arize Phoenix into .venv-phoenix (for the OpenTelemetry export test)"
  [ -x "$PHX/bin/python" ] || "$PY" -m venv "$PHX"
  "$PHX/bin/pip" install -q "$PHOENIX_SPEC"
  echo "$PHOENIX_SPEC" > "$PHX/.stamp"
fi
say "ready"
