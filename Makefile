# Tracer-overhead lab. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXECUTED := build/notebooks

.DEFAULT_GOAL := help

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: help
help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-12s %s\n", $$1, $$2}'

.PHONY: install
install: $(STAMP) ## create .venv and install the package with its dev tools

.PHONY: demo
demo: $(STAMP) ## the main job on target "local": bootstrap, then the notebooks, figures/
	$(BIN)/python -m analysis bootstrap local
	@mkdir -p $(EXECUTED)
	$(BIN)/papermill --no-progress-bar --log-level WARNING notebooks/0.1-published-results.ipynb \
	  $(EXECUTED)/0.1-published-results.ipynb
	$(BIN)/papermill --no-progress-bar --log-level WARNING notebooks/0.2-target-preflight.ipynb \
	  $(EXECUTED)/0.2-target-preflight.ipynb
	$(BIN)/papermill --log-level WARNING notebooks/1.0-dd-per-event-cost.ipynb \
	  $(EXECUTED)/1.0-dd-per-event-cost.ipynb -p target local
	@echo "figures and tables: $$(ls figures | wc -l) files in figures/; executed notebooks: $(EXECUTED)/"

.PHONY: test
test: $(STAMP) ## run the test suite
	$(BIN)/python -m pytest -q

.PHONY: figures
figures: $(STAMP) ## regenerate every figure and table from data/ (no target needed)
	$(BIN)/python -m analysis figures

.PHONY: notebooks
notebooks: $(STAMP) ## execute every notebook with papermill into build/notebooks/
	@mkdir -p $(EXECUTED)
	@for nb in notebooks/*.ipynb; do \
	  echo "== $$nb"; \
	  $(BIN)/papermill --no-progress-bar --log-level WARNING "$$nb" "$(EXECUTED)/$$(basename $$nb)" || exit 1; \
	done

.PHONY: lab
lab: $(STAMP) ## start JupyterLab in notebooks/
	$(BIN)/jupyter lab --notebook-dir=notebooks

.PHONY: lint
lint: $(STAMP) ## ruff over the package, tests and benchmarks
	$(BIN)/ruff check src tests benchmarks

.PHONY: benchmarks
benchmarks: $(STAMP) ## speed benchmarks (print figures; never part of the tests)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python "$$b" || exit 1; done

.PHONY: clean
clean: ## remove generated figures, processed data and executed notebooks (never data/raw)
	rm -rf build data/processed/* figures/*.pdf figures/*.png figures/*.tex figures/*.md
