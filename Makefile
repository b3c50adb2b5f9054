# Two commands matter: `make run` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
SAMPLE := sample_logs/phase8_pw10_5sectors.log

export QT_API := pyside6

.PHONY: run test lint bench setup sysdeps clean samples

setup: $(STAMP) sysdeps

$(STAMP): pyproject.toml setup.py viewer/io/_cscan.c viewer/io/_grammar.h viewer/sim/_engine.c
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

# Qt needs a few system libraries even offscreen; install them when we can.
sysdeps: $(STAMP)
	@bash .ci/qt-sysdeps.sh $(PY)

# Without a display the window cannot open: say what works instead, and end without an error.
run: setup
	@if [ "$$(uname -s)" = Linux ] && [ -z "$$DISPLAY$$WAYLAND_DISPLAY$$QT_QPA_PLATFORM" ]; then \
	  echo "No display (DISPLAY and WAYLAND_DISPLAY are not set): the viewer window needs X11 or Wayland."; \
	  echo "Headless, the same figures:"; \
	  echo "  $(VENV)/bin/cuzk-timeline report $(SAMPLE)"; \
	  echo "The window on a virtual screen (Debian: apt-get install xvfb):"; \
	  echo "  xvfb-run make run"; \
	else \
	  echo "$(PY) -m viewer $(SAMPLE)"; \
	  $(PY) -m viewer $(SAMPLE); \
	fi

test: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/ruff check viewer tests
	$(VENV)/bin/ruff format --check viewer tests

lint: setup
	$(VENV)/bin/ruff check viewer tests
	$(VENV)/bin/ruff format --check viewer tests
	$(VENV)/bin/lint-imports --no-cache

bench: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -s -m bench tests/benchmarks -p no:randomly

samples: setup
	$(PY) -m viewer.sim.samples sample_logs

clean:
	rm -rf $(VENV) build *.egg-info
