# The two things you run. Each sets itself up first (scripts/setup.sh is idempotent and fast on a rerun).
.PHONY: demo test lint bench setup

VENV := .venv
PY := $(VENV)/bin/python

demo:
	@scripts/setup.sh
	@$(PY) -m arcana_jupyter.demo

test:
	@scripts/setup.sh --browser
	@$(VENV)/bin/ruff check arcana_jupyter tests benchmarks
	@$(VENV)/bin/mypy
	@$(PY) -m pytest -q -p no:cacheprovider

lint:
	@$(VENV)/bin/ruff check arcana_jupyter tests benchmarks
	@$(VENV)/bin/mypy

bench:
	@scripts/setup.sh
	@$(PY) -m benchmarks.run_all
