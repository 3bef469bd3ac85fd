# Set-up and everyday commands. On a fresh clone, `make demo` and `make test` are enough:
# each one creates .venv, installs what it needs (once; later runs are instant) and runs.

PYTHON ?= python3
VENV   ?= .venv
VPY    := $(VENV)/bin/python
PIP    := $(VPY) -m pip
PYTEST_ARGS ?=

# Reinstall when the project metadata changes, or when a top-level package first appears
# (an editable install only maps the top-level packages that existed when it was made).
PKG_INITS := $(wildcard core/myia/__init__.py myia_kernel/__init__.py)

.DEFAULT_GOAL := help
.PHONY: help venv install install-test install-bench graphviz chromium demo test fuzz bench repl kernel clean distclean

help:
	@echo "make demo          install (editable), run the demo and write the tour notebook as HTML"
	@echo "make test          install with [test] extras and run the test suite on 2 cores"
	@echo "make fuzz          2,000 random programs (vm against llvm and finite differences), then 5,000 checked transform against transform, then 500 batched by vmap"
	@echo "make bench         install with [bench] extras (optional ones may fail) and run benchmarks"
	@echo "make repl          start the myia terminal REPL"
	@echo "make kernel        install the Jupyter kernelspec myia into .venv"
	@echo "make venv | install | install-test | install-bench | graphviz | chromium | clean | distclean"

# --- virtual environment ----------------------------------------------------------------

venv: $(VPY)

$(VPY):
	@py=""; \
	for c in $(PYTHON) python3.11 python3; do \
	  if command -v "$$c" >/dev/null 2>&1 && \
	     "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	    py="$$c"; break; \
	  fi; \
	done; \
	if [ -z "$$py" ]; then \
	  echo "error: myia needs Python >= 3.11 (tried: $(PYTHON) python3.11 python3)." >&2; exit 1; \
	fi; \
	ver=$$("$$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	echo "Creating $(VENV) with $$py (Python $$ver)"; \
	if ! "$$py" -m venv $(VENV); then \
	  rm -rf $(VENV); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing python$$ver-venv with apt-get (Debian ships venv separately)"; \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python$$ver-venv && \
	    "$$py" -m venv $(VENV) || exit 1; \
	  else \
	    echo "error: '$$py -m venv' failed. On Debian/Ubuntu: sudo apt-get install python$$ver-venv" >&2; \
	    exit 1; \
	  fi; \
	fi
	$(PIP) install --upgrade pip

# --- installs (stamp files make a second run instant) -----------------------------------

install: $(VENV)/.stamp-install

$(VENV)/.stamp-install: pyproject.toml $(PKG_INITS) | $(VPY)
	$(PIP) install -e .
	touch $@

install-test: $(VENV)/.stamp-test

$(VENV)/.stamp-test: pyproject.toml $(PKG_INITS) | $(VPY)
	$(PIP) install -e '.[test]'
	touch $(VENV)/.stamp-install $@

install-bench: $(VENV)/.stamp-bench

# The bench extras are optional: whatever fails to install is reported and skipped. The
# constraints keep numpy, scipy and llvmlite where the compiler has them (numba pins llvmlite).
$(VENV)/.stamp-bench: pyproject.toml $(PKG_INITS) | $(VPY)
	$(PIP) freeze 2>/dev/null | grep -iE '^(numpy|scipy|llvmlite)==' > $(VENV)/bench-constraints.txt || true
	@if ! $(PIP) install -c $(VENV)/bench-constraints.txt -e '.[bench]'; then \
	  echo "warning: the [bench] extras did not all install; trying them one by one"; \
	  $(PIP) install -e . || exit 1; \
	  for p in jax autograd numba; do \
	    $(PIP) install -c $(VENV)/bench-constraints.txt "$$p" || \
	      echo "warning: $$p is not installed; its benchmarks will be skipped"; \
	  done; \
	fi
	touch $(VENV)/.stamp-install $@

# --- Graphviz's `dot` (the Python package alone cannot draw) ----------------------------

graphviz:
	@if command -v dot >/dev/null 2>&1; then \
	  :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Graphviz (the dot program) with apt-get"; \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y graphviz; } || \
	    echo "warning: apt-get could not install graphviz; graphs will be shown as DOT text"; \
	else \
	  echo "Graphviz's dot program is not installed: graphs will be shown as DOT text, not pictures."; \
	  echo "To draw them, install it:"; \
	  echo "    sudo apt-get install graphviz    (Debian/Ubuntu)"; \
	  echo "    brew install graphviz            (macOS)"; \
	fi

# --- headless Chromium (the screenshot test of the tutorials' HTML) ---------------------

chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Chromium with apt-get (for tests/kernel/test_screenshots.py)"; \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } || \
	    echo "warning: apt-get could not install chromium; the screenshot test will be skipped"; \
	else \
	  echo "Chromium is not installed: the screenshot test of the tutorials will be skipped."; \
	  echo "To run it, install it:"; \
	  echo "    sudo apt-get install chromium    (Debian/Ubuntu)"; \
	  echo "    brew install --cask chromium     (macOS)"; \
	fi

# --- everyday targets -------------------------------------------------------------------

# The script demo, then the tour notebook run through the Myia kernel and written as HTML
# (with its drawings) to build/01-tour.html, whose path it prints.
demo: install graphviz
	@if [ ! -f examples/demo.py ]; then \
	  echo "error: there is no demo yet (examples/demo.py is missing)." >&2; exit 1; \
	fi
	$(VPY) examples/demo.py
	$(VPY) -m myia_kernel run notebooks/01-tour.ipynb --html build/01-tour.html

test: install-test graphviz chromium
	$(VPY) -m pytest -n 2 $(PYTEST_ARGS) tests

# The random-program test at 2,000 programs (the suite runs 300), then the transforms
# checked against one another on 5,000 generated programs (the suite runs 140 on CI), in two
# shards side by side; FUZZ_EXAMPLES=N and FUZZ_TRANSFORMS=N for more.
FUZZ_EXAMPLES ?= 2000
FUZZ_TRANSFORMS ?= 5000
FUZZ_VMAP ?= 500
fuzz: install-test
	MYIA_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(VPY) -m pytest -q --hypothesis-show-statistics \
	  tests/ad/test_random_programs.py -k both_backends
	MYIA_FUZZ_TRANSFORMS=$(FUZZ_TRANSFORMS) MYIA_FUZZ_SHARDS=2 $(VPY) -m pytest -q -n 2 \
	  tests/ad/test_transforms_fuzz.py -k generated_programs
	MYIA_FUZZ_VMAP=$(FUZZ_VMAP) $(VPY) -m pytest -q --hypothesis-show-statistics \
	  tests/ad/test_vmap_fuzz.py

bench: install-bench
	@if [ -f benchmarks/__main__.py ]; then \
	  echo "$(VPY) -m benchmarks"; $(VPY) -m benchmarks; \
	elif [ -f benchmarks/run.py ]; then \
	  echo "$(VPY) benchmarks/run.py"; $(VPY) benchmarks/run.py; \
	else \
	  echo "There are no benchmarks yet (benchmarks/__main__.py or benchmarks/run.py)."; \
	fi

repl: install
	$(VENV)/bin/myia-repl

# Install the `myia` kernelspec into the virtual environment (Jupyter run from .venv sees it).
kernel: install
	$(VPY) -m myia_kernel install --sys-prefix

clean:
	rm -rf build dist *.egg-info core/*.egg-info .pytest_cache .hypothesis benchmarks/out
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# Also removes the virtual environment (the next `make` recreates it).
distclean: clean
	rm -rf $(VENV)
