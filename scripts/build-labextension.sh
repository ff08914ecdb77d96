#!/usr/bin/env bash
# Build the JupyterLab extension (labextension/) into arcana_jupyter/labextension/ and make it
# visible to the JupyterLab in .venv (a symlink, like `jupyter labextension develop`); and the turn
# widget's ES module (src/widget.ts and what it imports, no JupyterLab code) into
# arcana_jupyter/static/widget.js + widget.css, for the anywidget of jupyter/widget.py.
#
# Idempotent: skipped when the sources (labextension/src, style, package.json, yarn.lock,
# tsconfig.json, install.json, widget.webpack.config.js and this script) are unchanged since the last
# successful build.
# Needs node >= 18 and the npm registry (jlpm installs the node packages from it; nothing else is
# fetched: `--core-path` points the builder at the installed jupyterlab/staging, see DESIGN.md).
#
#   scripts/build-labextension.sh            build if needed, then link into .venv
#   scripts/build-labextension.sh --force    rebuild even if the sources are unchanged
#   scripts/build-labextension.sh --no-link  build only (used by the wheel's build hook)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EXT=$ROOT/labextension
OUT=$ROOT/arcana_jupyter/labextension
NAME=arcana-jupyter
force=0
link=1
for a in "$@"; do
  case $a in
    --force) force=1 ;;
    --no-link) link=0 ;;
    *) echo "build-labextension.sh: unknown option $a (known: --force, --no-link)" >&2; exit 2 ;;
  esac
done
say() { printf '\033[1m[labextension]\033[0m %s\n' "$*"; }

# The Python that has jupyterlab: $ARCANA_PYTHON, the repo's .venv, the interpreter behind
# `jupyter-labextension` (a wheel build's isolated environment), or python3.
find_python() {
  local cands=()
  [ -n "${ARCANA_PYTHON:-}" ] && cands+=("$ARCANA_PYTHON")
  [ -x "$ROOT/.venv/bin/python" ] && cands+=("$ROOT/.venv/bin/python")
  local jl
  if jl=$(command -v jupyter-labextension 2>/dev/null); then
    local shebang
    shebang=$(head -1 "$jl" | sed -e 's/^#!//' -e 's/ .*//')
    [ -x "$shebang" ] && cands+=("$shebang")
  fi
  cands+=(python3)
  for p in "${cands[@]}"; do
    if "$p" -c "import importlib.util as u, sys; sys.exit(u.find_spec('jupyterlab') is None)" 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

if ! command -v node >/dev/null 2>&1; then
  echo "build-labextension.sh: node (>= 18) is needed to build the JupyterLab extension: apt-get install -y nodejs npm" >&2
  exit 1
fi
if ! PYBIN=$(find_python); then
  if [ -x "$ROOT/.venv/bin/pip" ]; then
    say "installing jupyterlab into .venv"
    "$ROOT/.venv/bin/pip" install -q 'jupyterlab>=4.2,<5'
    PYBIN=$ROOT/.venv/bin/python
  else
    echo "build-labextension.sh: no Python with jupyterlab found; run scripts/setup.sh first or set ARCANA_PYTHON" >&2
    exit 1
  fi
fi
PYBIN_DIR=$(dirname "$PYBIN")
export PATH="$PYBIN_DIR:$PATH"
# One interpreter start for what we need to know: the staging folder, jupyterlab's version, sys.prefix.
{ read -r CORE; read -r JLAB_VERSION; read -r PREFIX; } < <("$PYBIN" -c "
import importlib.util, importlib.metadata, os, sys
spec = importlib.util.find_spec('jupyterlab')
print(os.path.join(os.path.dirname(spec.origin), 'staging'))
print(importlib.metadata.version('jupyterlab'))
print(sys.prefix)")
JLPM=("$PYBIN" -c "import sys; from jupyter_builder.jlpm import main; sys.argv[0] = 'jlpm'; sys.exit(main())")

stamp=$( (cd "$EXT" && find src style -type f | LC_ALL=C sort | xargs cat; cat package.json yarn.lock tsconfig.json install.json .yarnrc.yml widget.webpack.config.js; cat "$ROOT/scripts/build-labextension.sh"; echo "$JLAB_VERSION") | sha256sum | cut -c1-16)
STAMP_FILE=$EXT/node_modules/.arcana-build-stamp
WIDGET=$ROOT/arcana_jupyter/static
if [ $force = 0 ] && [ "$(cat "$STAMP_FILE" 2>/dev/null)" = "$stamp" ] && ls "$OUT"/static/remoteEntry.*.js >/dev/null 2>&1 && [ -s "$WIDGET/widget.js" ]; then
  say "up to date ($stamp)"
else
  t0=$(date +%s)
  cd "$EXT"
  say "installing node packages (jlpm, from the npm registry)"
  "${JLPM[@]}" install --immutable >/tmp/arcana-jlpm-install.log 2>&1 || { cat /tmp/arcana-jlpm-install.log >&2; exit 1; }
  say "compiling TypeScript"
  "${JLPM[@]}" run build:lib
  say "bundling the turn widget (webpack, ES module) -> arcana_jupyter/static/widget.js"
  mkdir -p "$WIDGET"
  node node_modules/webpack/bin/webpack.js --config widget.webpack.config.js >/tmp/arcana-widget-build.log 2>&1 || { cat /tmp/arcana-widget-build.log >&2; exit 1; }
  cp style/index.css "$WIDGET/widget.css"
  say "building the extension (jupyter labextension build --core-path $CORE)"
  "$PYBIN" -m jupyterlab.labextensions build --core-path "$CORE" . >/tmp/arcana-labext-build.log 2>&1 || { cat /tmp/arcana-labext-build.log >&2; exit 1; }
  cp install.json "$OUT/install.json"
  rm -f "$OUT/.build-stamp"
  echo "$stamp" >"$STAMP_FILE"
  cd "$ROOT"
  say "built in $(( $(date +%s) - t0 )) s -> arcana_jupyter/labextension/"
fi

if [ $link = 1 ]; then
  # Make the build visible to the JupyterLab next to $PYBIN (what `jupyter labextension develop` does).
  DEST=$PREFIX/share/jupyter/labextensions/$NAME
  if [ "$(readlink "$DEST" 2>/dev/null)" != "$OUT" ]; then
    mkdir -p "$(dirname "$DEST")"
    rm -rf "$DEST"
    ln -s "$OUT" "$DEST"
    say "linked $DEST -> arcana_jupyter/labextension"
  fi
  # The server extension (the trace viewer's endpoint), enabled as the wheel's shared data enables it.
  SERVER_CONF=$PREFIX/etc/jupyter/jupyter_server_config.d/arcana_jupyter.json
  SERVER_SRC=$ROOT/arcana_jupyter/server/config/arcana_jupyter.json
  if [ "$(readlink "$SERVER_CONF" 2>/dev/null)" != "$SERVER_SRC" ]; then
    mkdir -p "$(dirname "$SERVER_CONF")"
    rm -f "$SERVER_CONF"
    ln -s "$SERVER_SRC" "$SERVER_CONF"
    say "linked $SERVER_CONF -> arcana_jupyter/server/config/arcana_jupyter.json"
  fi
fi
