# Tracer-overhead lab. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KERNEL_CONFIG := $(VENV)/etc/ipython/ipython_kernel_config.py
EXECUTED := build/notebooks
# what `make strip` strips (a test points it at a copy)
NOTEBOOKS ?= $(wildcard notebooks/*.ipynb)
.DEFAULT_GOAL := help

$(STAMP): pyproject.toml | $(KERNEL_CONFIG)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,docs]'
	touch $(STAMP)

# the venv's kernels (papermill's, JupyterLab's) read it: without it every kernel prints
# ipykernel's "running over TCP without encryption" warning (etc/ipython/ says why)
$(KERNEL_CONFIG): etc/ipython/ipython_kernel_config.py
	@mkdir -p $(@D)
	cp $< $@.tmp && mv $@.tmp $@

.PHONY: help
help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-12s %s\n", $$1, $$2}'

.PHONY: install
install: $(STAMP) ## create .venv and install the package with its dev and docs tools

DEMO_CAMPAIGN := demo-$(shell date -u +%Y%m%d-%H%M%S)
# papermill shows no display updates, so the campaign writes its progress lines to the
# terminal itself (analysis.progress; a test runs the demo's papermill line with it)
DEMO_PROGRESS := TRACELAB_PROGRESS=stderr

.PHONY: demo
demo: $(STAMP) ## bootstrap for dd, notebooks 0.1, 0.2, 1.0 on "local": every dd cost to +-10 % (rate method, 4 min)
	$(BIN)/python -m analysis bootstrap local --benchmark dd
	@mkdir -p $(EXECUTED)
	$(BIN)/papermill --no-progress-bar --log-level WARNING notebooks/0.1-published-results.ipynb \
	  $(EXECUTED)/0.1-published-results.ipynb
	$(BIN)/papermill --no-progress-bar --log-level WARNING notebooks/0.2-target-preflight.ipynb \
	  $(EXECUTED)/0.2-target-preflight.ipynb
	@echo "notebook 1.0, campaign $(DEMO_CAMPAIGN): its progress, a line per round and every 15 s:"
	$(DEMO_PROGRESS) $(BIN)/papermill --no-progress-bar --log-level WARNING \
	  notebooks/1.0-dd-per-event-cost.ipynb $(EXECUTED)/1.0-dd-per-event-cost.ipynb \
	  -p target local -p campaign $(DEMO_CAMPAIGN)
	@first=$$($(BIN)/python -m analysis report $(DEMO_CAMPAIGN) --open-first) && \
	  echo "figures and tables: $$(ls figures | wc -l) files in figures/; executed notebooks: $(EXECUTED)/" && \
	  echo "campaign $(DEMO_CAMPAIGN): open first $(EXECUTED)/1.0-dd-per-event-cost.ipynb, $$first"

.PHONY: test
# the run's counts and wall time land in build/test-results.xml (JUnit XML): the docs' record
# of a suite run is made from it (docs/_ext/record.py suite). tests/phased.py runs the VM tests
# and the tests marked beside_vm side by side first, then the rest alone
test: $(STAMP) ## install what the tests need (as root: bootstrap local --tests), then run them
	$(BIN)/python -m analysis bootstrap local --tests
	@mkdir -p build
	$(BIN)/python tests/phased.py -q --durations=10 --junitxml=build/test-results.xml

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

# more options for JupyterLab (a test: LAB_ARGS='--no-browser --port=N ...')
LAB_ARGS ?=

.PHONY: lab
lab: $(STAMP) ## JupyterLab at the project root: notebooks/ and the executed build/notebooks/
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "running as root: JupyterLab started with --allow-root"; root=--allow-root; \
	else root=; fi; \
	exec $(BIN)/jupyter lab --notebook-dir=. $$root $(LAB_ARGS)

# Clears what running a notebook adds (outputs, execution counts, papermill and
# widget metadata, empty tag lists) with nbformat; rewrites only the notebooks
# that had any. A papermill `injected-parameters` cell is left for you to delete.
define STRIP_NOTEBOOKS
import sys
import nbformat
changed = 0
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("execution", "collapsed", "scrolled", "papermill"):
            cell.metadata.pop(key, None)
        if cell.metadata.get("tags") == []:
            del cell.metadata["tags"]
    for key in ("papermill", "widgets"):
        nb.metadata.pop(key, None)
    if nbformat.writes(nb) != before:
        nbformat.write(nb, path)
        changed += 1
        print("stripped", path)
print(changed, "of", len(sys.argv) - 1, "notebooks needed stripping")
endef

.PHONY: strip
strip: export STRIP_NOTEBOOKS_PY := $(STRIP_NOTEBOOKS)
strip: $(STAMP) ## remove outputs and execution counts from notebooks/*.ipynb (before committing)
	@$(BIN)/python -c "$$STRIP_NOTEBOOKS_PY" $(NOTEBOOKS)

DOCS_HTML := build/docs/html
# the notebooks the site renders (never executes): build/notebooks/X when it exists, else notebooks/X
DOCS_NOTEBOOKS := docs/notebooks

.PHONY: docs
docs: $(STAMP) ## the documentation site (Sphinx + MyST; a warning fails it) into build/docs/html/
	@rm -rf $(DOCS_NOTEBOOKS) && mkdir -p $(DOCS_NOTEBOOKS)
	@for nb in notebooks/*.ipynb; do \
	  name=$$(basename "$$nb"); \
	  if [ -f "$(EXECUTED)/$$name" ]; then cp "$(EXECUTED)/$$name" $(DOCS_NOTEBOOKS)/; src=executed; \
	  else cp "$$nb" $(DOCS_NOTEBOOKS)/; src="not executed"; fi; \
	  echo "$$name: $$src" >> $(DOCS_NOTEBOOKS)/SOURCES.txt; \
	done
	$(BIN)/sphinx-build -b html -W --keep-going -E -q -d build/docs/doctrees docs $(DOCS_HTML)
	@echo "docs: $(DOCS_HTML)/index.html"

.PHONY: lint
lint: $(STAMP) ## ruff over the package, tests and the speed benchmarks
	$(BIN)/ruff check src tests speed

.PHONY: speed
speed: $(STAMP) ## speed benchmarks in speed/ (print figures; never part of the tests)
	@for b in speed/bench_*.py; do echo "== $$b"; $(BIN)/python "$$b" || exit 1; done

.PHONY: clean
clean: ## remove generated figures, processed data and executed notebooks (never data/raw)
	rm -rf build docs/notebooks data/processed/* figures/*.pdf figures/*.png figures/*.tex figures/*.md
