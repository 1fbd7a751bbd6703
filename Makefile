# The two commands: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# Debian packages the test suite drives: a real browser and Prometheus (promtool too).
APT_PACKAGES ?= chromium prometheus

.PHONY: demo test venv install install-dev apt-packages services lint check-contracts

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python

install: venv
	$(BIN)/pip install --quiet -e ./client -e .

install-dev: venv
	$(BIN)/pip install --quiet -e ./client -e ".[dev]"

## make demo: the embedded default (SQLite, local contract store, in-process evaluator, demo data).
# Notification e-mails of the demo are written to var/mail/ instead of the terminal.
DEMO_ENV := DEBUG=1 SITE_URL=http://127.0.0.1:$(PORT) \
	EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend EMAIL_FILE_PATH=var/mail
demo: install
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEMO_ENV) $(BIN)/python manage.py load_demo
	@echo "Serving http://127.0.0.1:$(PORT)  (Ctrl-C stops it); demo e-mails go to var/mail/"
	$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# The OpenAPI document must generate without a warning (the test settings need no secret).
SPECTACULAR := DJANGO_SETTINGS_MODULE=tests.settings $(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null

## make test: the whole suite against real PostgreSQL, Redis, S3 (weed), Celery, Prometheus and Chromium.
test: install-dev apt-packages services
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(SPECTACULAR)
	$(BIN)/python -m pytest -n 2 --dist loadfile

apt-packages:
	@scripts/ensure-apt-packages $(APT_PACKAGES)

services:
	@scripts/ensure-services

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(SPECTACULAR)
