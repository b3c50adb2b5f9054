#!/usr/bin/env bash
# Make sure Qt can start offscreen; on a bare Debian-like machine install the
# libraries it needs (as root), otherwise print the exact command to run.
set -u
PY=${1:-.venv/bin/python}
probe() {
  QT_QPA_PLATFORM=offscreen "$PY" -c 'from PySide6.QtWidgets import QApplication; QApplication([])' >/dev/null 2>&1
}
probe && exit 0
PKGS="libgl1 libegl1 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3 fonts-dejavu-core"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Qt cannot start: installing system libraries: $PKGS"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null
  probe && exit 0
fi
echo "Qt cannot start offscreen. Install its system libraries, e.g.:" >&2
echo "  sudo apt-get install -y $PKGS" >&2
QT_QPA_PLATFORM=offscreen "$PY" -c 'from PySide6.QtWidgets import QApplication; QApplication([])'
exit 1
