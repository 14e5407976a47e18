# labkit: the school mini AI datacenter lab.
#   make lab       open the curriculum in JupyterLab (creates .venv on first use)
#   make test      install what the tests need and run every test (CI runs exactly this)
#   make present   serve the lessons as voila apps for a class (127.0.0.1 unless HOST=...)
#                  e.g. make present HOST=0.0.0.0 LESSON=03 WARM=30   (a class of 30, token printed)
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The first Python >= 3.11 on PATH (override: make lab PYTHON=/path/to/python3.12).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
CONSTRAINTS := binder/constraints.txt
LAB_PORT ?= 8888
PORT ?= 8866
HOST ?= 127.0.0.1
THEME ?= light
# LESSON: lesson(s) of the day kept preheated (number or name, comma-separated); WARM: kernels
# kept ready per such lesson (a class: its size); MAX_KERNELS: pages open at once (default 40).
LESSON ?=
WARM ?=
MAX_KERNELS ?=
PRESENT_ARGS := --host $(HOST) --port $(PORT) --theme $(THEME) \
	$(if $(LESSON),--lesson $(LESSON)) $(if $(WARM),--warm $(WARM)) \
	$(if $(MAX_KERNELS),--max-kernels $(MAX_KERNELS))
# JupyterLab refuses to run as root without this flag (CI machines and lab servers often run as root).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help lab test present thumbnails notebooks bench lint mutation system-deps clean

help:
	@echo "make lab        open the curriculum in JupyterLab"
	@echo "make test       run every test (unit, notebooks with nbval, browser)"
	@echo "make present    serve the lessons as voila apps (HOST=0.0.0.0 for a classroom: token required;"
	@echo "                LESSON=03 WARM=30 preheats lesson 03 for a class of 30; THEME=dark)"
	@echo "make thumbnails screenshot each lesson's main chart for the gallery (commit the PNGs)"
	@echo "make notebooks  re-execute and clean the committed notebooks"
	@echo "make bench      run the benchmarks in benchmarks/"
	@echo "make mutation  mutation-test the model modules (MODULES=\"goodput tariff\"; not in make test)"

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "labkit needs Python 3.11 or newer on PATH (or PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.lab-installed: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab]"
	@mkdir -p $(VENV)/share/jupyter/lab/settings
	@echo '{"@jupyterlab/apputils-extension:notification":{"fetchNews":"false","checkForUpdates":false}}' \
		> $(VENV)/share/jupyter/lab/settings/overrides.json
	@touch $@

$(VENV)/.test-installed: $(VENV)/.lab-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,test]"
	@touch $@

lab: $(VENV)/.lab-installed
	$(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
		--ServerApp.port=$(LAB_PORT)

present: $(VENV)/.lab-installed
	$(BIN)/python -m labkit.serve $(PRESENT_ARGS)

thumbnails: $(VENV)/.test-installed system-deps
	$(BIN)/python -m labkit.serve.thumbnails

# Debian's chromium drives the browser tests (no browser download); Hangul needs the CJK fonts.
system-deps:
	@missing=""; \
	[ -x "$${LABKIT_CHROMIUM:-/usr/bin/chromium}" ] || missing="$$missing chromium"; \
	if command -v dpkg >/dev/null 2>&1; then dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing="$$missing fonts-noto-cjk"; fi; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "missing:$$missing (install them, or set LABKIT_CHROMIUM to a Chromium binary)"; exit 1; fi; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		$$sudo apt-get install -y -q $$missing >/dev/null \
		|| { $$sudo apt-get update -q >/dev/null && $$sudo apt-get install -y -q $$missing >/dev/null; } \
		|| { echo "could not install:$$missing"; exit 1; }; \
	fi

test: $(VENV)/.test-installed system-deps
	$(BIN)/python -m pytest

notebooks: $(VENV)/.test-installed
	$(BIN)/python -m labkit._dev.notebooks execute notebooks/*.ipynb

bench: $(VENV)/.test-installed
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(VENV)/.test-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,test,dev]"
	$(BIN)/python -m ruff check labkit tests benchmarks
	$(BIN)/python -m mypy

# Mutation testing of the model modules (mutmut; minutes per module, not part of `make test`):
# `make mutation MODULES="goodput tariff"`; scores and survivors in build/mutation/summary.json.
mutation: $(VENV)/.test-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,test,dev]"
	$(BIN)/python -m labkit._dev.mutation $(MODULES)

clean:
	rm -rf $(VENV) test-artifacts benchmarks/results build/mutation
