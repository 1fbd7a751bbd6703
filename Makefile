# The two commands: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# Debian packages the test suite drives: a real browser and Prometheus (promtool too).
APT_PACKAGES ?= chromium prometheus

.PHONY: demo demo-setup demo-env test venv install install-dev apt-packages services lint check-contracts

# The installer: uv where the package index has it (fetched into the virtualenv once; it
# installs the dependencies several times faster than pip and shows its progress), else pip
# with its progress bar. Either way the first `make demo` says what it is doing.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@$(BIN)/pip install --quiet uv 2>/dev/null || echo "uv is not on this package index: pip installs the dependencies"

INSTALL = echo "Installing the dependencies into $(VENV) (the first time takes a minute or two)..."; \
	if [ -x $(BIN)/uv ]; then $(BIN)/uv pip install --python $(BIN)/python $(1) || $(BIN)/pip install --progress-bar on $(1); \
	else $(BIN)/pip install --progress-bar on $(1); fi

venv: $(BIN)/python

# Stamps in the virtualenv: the installer runs again only when a pyproject.toml is newer than the
# last install, so a second `make demo` or `make test` starts in seconds.
INSTALLED := $(VENV)/.installed
INSTALLED_DEV := $(VENV)/.installed-dev
PYPROJECTS := pyproject.toml client/pyproject.toml

$(INSTALLED): $(PYPROJECTS) | $(BIN)/python
	@$(call INSTALL,-e ./client -e .)
	touch $@

# The development install holds the runtime one: it stamps both.
$(INSTALLED_DEV): $(PYPROJECTS) | $(BIN)/python
	@$(call INSTALL,-e ./client -e ".[dev]")
	touch $@ $(INSTALLED)

install: $(INSTALLED)

install-dev: $(INSTALLED_DEV)

## make demo: the embedded default (SQLite, local contract store, in-process evaluator, demo data).
# The demo's settings go into the checkout's .env (git-ignored, with a generated SECRET_KEY),
# which manage.py reads: every documented command then runs as the demo does, from the
# project root. Notification e-mails are written to var/mail/ (the default EMAIL_FILE_PATH).
DEMO_ENV := DEBUG=1 SITE_URL=http://127.0.0.1:$(PORT) \
	EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend
demo-env:
	@$(PYTHON) scripts/write-demo-env --file .env $(DEMO_ENV)

# The demo database is migrated and loaded again only when something those read changed (a
# migration, a demo loader, the fixtures, the .env) or the database is gone: each is a
# process start of the whole project. The stamp keeps the last load's report, whose list
# of demo users every `make demo` prints (delete it to load again; rm -rf var starts afresh).
DEMO_DB := var/registry.sqlite3
DEMO_LOADED := var/demo-loaded.txt
DEMO_INPUTS := $(wildcard */migrations/*.py */demo.py registry/management/commands/load_demo.py .env) \
	$(shell find fixtures -type f -not -path '*/__pycache__/*' 2>/dev/null)
$(DEMO_LOADED): $(DEMO_INPUTS) $(if $(wildcard $(DEMO_DB)),,FORCE) | install
	mkdir -p var
	$(BIN)/python manage.py migrate --noinput
	set -o pipefail; $(BIN)/python manage.py load_demo | tee $@.part
	mv $@.part $@

FORCE:

# Everything `make demo` does but serving (scripts/run-doc-commands starts from it).
demo-setup: install demo-env $(DEMO_LOADED)

demo: demo-setup
	@sed -n '/Log in as/,$$p' $(DEMO_LOADED)
	@echo "Serving http://127.0.0.1:$(PORT)  (Ctrl-C stops it); demo e-mails go to var/mail/"
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# The OpenAPI document must generate without a warning (the test settings need no secret).
SPECTACULAR := DJANGO_SETTINGS_MODULE=tests.settings $(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null

## make test: the whole suite against real PostgreSQL, Redis, S3 (weed), Celery, Prometheus and Chromium.
test: install-dev apt-packages services
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(SPECTACULAR)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

apt-packages:
	@scripts/ensure-apt-packages $(APT_PACKAGES)

## make screenshots: docs/screenshots/ again, from a fresh demo in a scratch database (see the script).
.PHONY: screenshots
screenshots: install-dev apt-packages
	$(BIN)/python scripts/screenshots

services:
	@scripts/ensure-services

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(SPECTACULAR)
