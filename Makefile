# labkit: the school mini AI datacenter lab.
#   make lab       open the curriculum in JupyterLab (creates .venv on first use)
#   make test      install what the tests need and run every test (CI runs exactly this)
#   make present   the lessons as voila apps on the teacher's own screen (127.0.0.1)
#   make hub       the class hub: every student their own server (JupyterHub, as root)
#                  as root (or with sudo): make hub ROSTER=class.csv TEACHER=kim HOST=0.0.0.0 PORT=8000
#   make hub-service  the same hub as a systemd service (python -m labkit.hub install-service)
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
# make hub: the roster CSV (username,display_name), the teacher's login, where browsers connect
ROSTER ?=
TEACHER ?=
# GPU_POLICY: each student's GPU share: auto (MIG device, else whole GPU, else shared) | mig |
# whole | shared (labkit.hub.gpushare)
GPU_POLICY ?=
# DISK_MIB / TMP_MIB: each student's home image and private /tmp (default 2048 / 256 MiB)
DISK_MIB ?=
TMP_MIB ?=
# CERT / KEY: the school's HTTPS certificate (PEM, chain appended) and key; SELF_SIGNED=1 makes
# one for this server instead (labkit.hub.tls); HTTP on the same port redirects to HTTPS
CERT ?=
KEY ?=
SELF_SIGNED ?=
HUB_PORT := $(if $(filter command line environment,$(origin PORT)),$(PORT),8000)
# configurable-http-proxy (npm), installed into this local prefix (never globally)
HUB_NODE := .hub/node
CHP_VERSION := 5.3.0
CHP := $(HUB_NODE)/node_modules/.bin/configurable-http-proxy
THEME ?= light
# LESSON: lesson(s) of the day kept preheated (number or name, comma-separated); WARM: kernels
# kept ready per such lesson (a class: its size); MAX_KERNELS: pages open at once (default 40).
LESSON ?=
WARM ?=
MAX_KERNELS ?=
PRESENT_ARGS := --port $(PORT) --theme $(THEME) \
	$(if $(LESSON),--lesson $(LESSON)) $(if $(WARM),--warm $(WARM)) \
	$(if $(MAX_KERNELS),--max-kernels $(MAX_KERNELS))
# labkit's bytecode, written ahead: a kernel that cannot write __pycache__ (a student's system
# user on the hub, PYTHONDONTWRITEBYTECODE) would compile ~80 modules on every start (~0.3 s
# CPU before a lesson's first chart; benchmarks/bench_lessons_browser.py). Quick when current.
PYC = @$(BIN)/python -m compileall -q labkit >/dev/null
# JupyterLab refuses to run as root without this flag (CI machines and lab servers often run as root).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help lab test test-fast present hub hub-service thumbnails notebooks bench lint mutation system-deps clean

help:
	@echo "make lab        open the curriculum in JupyterLab"
	@echo "make test       run every test (unit, notebooks with nbval, browser)"
	@echo "make test-fast  the inner loop: unit and property tests (no notebooks, browser or live hub)"
	@echo "make present    the lessons as voila apps on this screen (127.0.0.1; LESSON=03 WARM=2; THEME=dark)"
	@echo "make hub        the class hub, as root (or with sudo): ROSTER=class.csv TEACHER=<name> [HOST=0.0.0.0] [PORT=8000] [GPU_POLICY=auto] [DISK_MIB=2048] [TMP_MIB=256] [CERT=server.crt KEY=server.key | SELF_SIGNED=1]"
	@echo "make hub-service the class hub as a systemd service (starts at boot and after a crash): the same ROSTER=... TEACHER=..."
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
	@# labkit_sim.pth: with LABKIT_GPU=sim:<model>, every Python process here (nvitop, gpustat,
	@# kernels) reads the shared simulated lab through pynvml (labkit/gpu/sim/hook.py)
	$(BIN)/python -m labkit.gpu.sim.hook install >/dev/null
	$(PYC)
	@# JupyterLab's defaults for this venv: no news fetch, and the menus in Korean
	@# (jupyterlab-language-pack-ko-kr, from the lab extra)
	@mkdir -p $(VENV)/share/jupyter/lab/settings
	@echo '{"@jupyterlab/apputils-extension:notification":{"fetchNews":"false","checkForUpdates":false},'\
		'"@jupyterlab/translation-extension:plugin":{"locale":"ko_KR"}}' \
		> $(VENV)/share/jupyter/lab/settings/overrides.json
	@# JupyterLab's core extensions no lesson uses, off (labkit/serve/labconfig.py)
	$(BIN)/python -m labkit.serve.labconfig >/dev/null
	@touch $@

$(VENV)/.hub-installed: $(VENV)/.lab-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,hub]"
	@touch $@

$(CHP): | system-deps
	npm install --prefix $(HUB_NODE) --no-audit --no-fund --no-save --loglevel=error \
		configurable-http-proxy@$(CHP_VERSION)
	@touch $@

$(VENV)/.test-installed: $(VENV)/.lab-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,test]"
	@touch $@

# The server config strips outputs from course notebooks on save (labkit.serve.presave).
lab: $(VENV)/.lab-installed
	$(PYC)
	@$(BIN)/python -m labkit.serve.labconfig >/dev/null
	$(BIN)/jupyter lab $(ROOT_FLAG) --config=labkit/serve/config/jupyter_server_config.py \
		--ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT)

present: $(VENV)/.lab-installed
	$(BIN)/python -m labkit.serve $(PRESENT_ARGS)

hub: $(VENV)/.hub-installed $(CHP)
	@test -n "$(ROSTER)" -a -n "$(TEACHER)" || { \
		echo "사용법(usage), 관리자(root) 권한으로(또는 sudo로): make hub ROSTER=class.csv TEACHER=<교사 이름> [HOST=0.0.0.0] [PORT=8000] [GPU_POLICY=auto] [DISK_MIB=2048] [TMP_MIB=256] [CERT=server.crt KEY=server.key | SELF_SIGNED=1]"; \
		echo "  ROSTER: 학생 명단(roster) CSV 파일 (username,display_name), TEACHER: 교사(teacher)의 로그인 이름"; exit 2; }
	$(BIN)/python -m labkit.hub serve --roster "$(ROSTER)" --teacher "$(TEACHER)" \
		--host $(HOST) --port $(HUB_PORT) $(if $(GPU_POLICY),--gpu-policy $(GPU_POLICY)) \
		$(if $(DISK_MIB),--disk-limit-mib $(DISK_MIB)) $(if $(TMP_MIB),--tmp-limit-mib $(TMP_MIB)) \
		$(if $(CERT),--ssl-cert "$(CERT)" --ssl-key "$(KEY)") $(if $(SELF_SIGNED),--self-signed)

# The same class as a systemd service (labkit.hub.service): it starts at boot and after a crash.
hub-service: $(VENV)/.hub-installed $(CHP)
	@test -n "$(ROSTER)" -a -n "$(TEACHER)" || { \
		echo "사용법(usage), 관리자(root) 권한으로(또는 sudo로): make hub-service ROSTER=class.csv TEACHER=<교사 이름> [HOST=0.0.0.0] [PORT=8000] [GPU_POLICY=auto] [DISK_MIB=2048] [TMP_MIB=256]"; \
		echo "  서비스(service)를 지우려면: python -m labkit.hub uninstall-service"; exit 2; }
	$(BIN)/python -m labkit.hub install-service --roster "$(ROSTER)" --teacher "$(TEACHER)" \
		--host $(HOST) --port $(HUB_PORT) $(if $(GPU_POLICY),--gpu-policy $(GPU_POLICY)) \
		$(if $(DISK_MIB),--disk-limit-mib $(DISK_MIB)) $(if $(TMP_MIB),--tmp-limit-mib $(TMP_MIB)) \
		$(if $(CERT),--ssl-cert "$(CERT)" --ssl-key "$(KEY)") $(if $(SELF_SIGNED),--self-signed)

thumbnails: $(VENV)/.test-installed system-deps
	$(BIN)/python -m labkit.serve.thumbnails

# Debian's chromium drives the browser tests (no browser download); Hangul needs the CJK fonts;
# Debian's prometheus scrapes labkit.gpu.exporter in the Prometheus tests.
# npm installs configurable-http-proxy; the students' environment is built on Debian's python3.11;
# the hub formats each student's home image with e2fsprogs' mkfs.ext4 and mounts it (mount).
system-deps:
	@missing=""; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if command -v dpkg >/dev/null 2>&1; then dpkg -s python3.11-venv >/dev/null 2>&1 || missing="$$missing python3.11-venv"; fi; \
	[ -x "$${LABKIT_CHROMIUM:-/usr/bin/chromium}" ] || missing="$$missing chromium"; \
	[ -x "$${LABKIT_PROMETHEUS:-/usr/bin/prometheus}" ] || missing="$$missing prometheus"; \
	if command -v dpkg >/dev/null 2>&1; then dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing="$$missing fonts-noto-cjk"; fi; \
	if command -v dpkg >/dev/null 2>&1; then for p in e2fsprogs mount; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; fi; \
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

# Two tiers: the unit tests, notebooks and voila apps in chromium on both cores (pytest-xdist,
# each file on one worker: a notebook's cells and a browser file's pages stay in order), then
# what drives a real hub or waits in wall-clock time, alone (markers hub, serial).
test: $(VENV)/.test-installed system-deps $(CHP)
	$(BIN)/python -m pytest -m "not hub and not serial" -n 2 --dist loadfile
	$(BIN)/python -m pytest -m "hub or serial"

# The inner loop: unit and property tests only (no notebooks, no chromium, no live hub).
test-fast: $(VENV)/.test-installed
	$(BIN)/python -m pytest tests -m "not browser and not hub and not serial" -n 2 --dist loadfile

notebooks: $(VENV)/.test-installed
	$(BIN)/python -m labkit._dev.notebooks execute notebooks/*.ipynb

bench: $(VENV)/.test-installed
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(VENV)/.test-installed
	$(BIN)/python -m ruff check labkit tests benchmarks
	$(BIN)/python -m mypy

# Mutation testing of the model modules (mutmut; minutes per module, not part of `make test`):
# `make mutation MODULES="goodput tariff"`; scores and survivors in build/mutation/summary.json.
mutation: $(VENV)/.test-installed
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[lab,test,dev]"
	$(BIN)/python -m labkit._dev.mutation $(MODULES)

clean:
	rm -rf $(VENV) test-artifacts benchmarks/results .hub build/mutation
