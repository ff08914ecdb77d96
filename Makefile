# The two things you run. Each sets itself up first (scripts/setup.sh is idempotent and fast on a rerun).
.PHONY: demo test lint bench setup ts-types

VENV := .venv
PY := $(VENV)/bin/python

demo:
	@scripts/setup.sh
	@$(PY) -m arcana_jupyter.demo

test:
	@scripts/setup.sh --browser
	@$(VENV)/bin/ruff check arcana_jupyter tests benchmarks scripts
	@$(VENV)/bin/mypy
	@$(PY) -m pytest -q -p no:cacheprovider

lint:
	@$(VENV)/bin/ruff check arcana_jupyter tests benchmarks scripts
	@$(VENV)/bin/mypy
	@$(PY) scripts/gen_ts_types.py --check

# labextension/src/schema.gen.ts from the pydantic models' JSON schema (commit it with the model change).
ts-types:
	@$(PY) scripts/gen_ts_types.py

bench:
	@scripts/setup.sh
	@$(PY) -m benchmarks.run_all
