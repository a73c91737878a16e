# shellcheck shell=bash
# Sourced by scripts/windows and scripts/windows-test: the cache of the Windows build (the third-party
# libraries, cross/deps.sh) and Wine's prefix inside it, made on first use; no debug output, no
# display (console programs alone), and no Mono or Gecko for wineboot to offer.
export GMLP_MINGW_CACHE=${GMLP_MINGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gmlp-mingw}
export WINEPREFIX=${WINEPREFIX:-$GMLP_MINGW_CACHE/wine} WINEDEBUG=${WINEDEBUG:--all} WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
