#!/usr/bin/env bash
# Make sure Qt can start (offscreen always; on the X display too when there is one).
# On a bare Debian-like machine install the libraries it needs (as root),
# otherwise print the exact command to run.
set -u
PY=${1:-.venv/bin/python}
START='from PySide6.QtWidgets import QApplication; QApplication([])'
probe() {
  QT_QPA_PLATFORM=offscreen "$PY" -c "$START" >/dev/null 2>&1 || return 1
  if [ -n "${DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    "$PY" -c "$START" >/dev/null 2>&1 || return 1
  fi
  return 0
}
probe && exit 0
PKGS="libgl1 libegl1 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3 fonts-dejavu-core
      libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
      libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1"
PKGS=$(echo $PKGS)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Qt cannot start: installing system libraries: $PKGS"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null
  probe && exit 0
fi
echo "Qt cannot start. Install its system libraries, e.g.:" >&2
echo "  sudo apt-get install -y $PKGS" >&2
QT_QPA_PLATFORM=offscreen "$PY" -c "$START"
exit 1
