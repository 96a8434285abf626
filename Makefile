# Two commands: `make run` and `make test`. Both build .venv from scratch when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8765
REPO   ?= $(CURDIR)
DATA_DIR ?= $(CURDIR)/.repocontext-data
PYTEST_ARGS ?=
# Where pip takes torch from: empty (default) = pip's configured index; on an ordinary Linux
# machine PyPI's torch==2.13.0 is the multi-GB CUDA build, so pass the CPU wheel index:
#   make run TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
TORCH_INDEX_URL ?=

# The store tests (and bench/store.py) start throwaway PostgreSQL clusters: initdb and postgres
# must be on PATH or in PG_BIN (Debian's postgresql package puts them in
# /usr/lib/postgresql/<version>/bin).
PG_BIN ?= $(lastword $(sort $(wildcard /usr/lib/postgresql/*/bin)))

.PHONY: venv run test lint format bench clean postgres-check

venv: $(STAMP)

# torch==2.13.0 goes first: the CPU wheel lies on disk (or comes from TORCH_INDEX_URL), and
# any other torch spec pulls a multi-GB CUDA build when sentence-transformers asks for torch.
$(STAMP): pyproject.toml
	# A venv left half-made by an interrupted run (no pip) is made again from scratch.
	$(BIN)/python -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet $(if $(TORCH_INDEX_URL),--index-url "$(TORCH_INDEX_URL)") "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[semantic,dev]"
	touch $(STAMP)

run: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/repocontext serve --transport http --host $(HOST) --port $(PORT) \
		--data-dir "$(DATA_DIR)" --repo "$(REPO)"

postgres-check:
	@command -v initdb >/dev/null 2>&1 || test -x "$(PG_BIN)/initdb" || { \
		echo "make test needs the PostgreSQL server binaries (initdb, postgres): the store" >&2; \
		echo "tests run against a throwaway cluster. Install them with" >&2; \
		echo "  sudo apt-get install postgresql" >&2; \
		echo "and put /usr/lib/postgresql/15/bin on PATH (or pass PG_BIN=DIR)." >&2; \
		exit 1; }

test: $(STAMP) postgres-check
	$(if $(PG_BIN),PATH="$$PATH:$(PG_BIN)") HF_HUB_OFFLINE=1 $(BIN)/python -m pytest --cov --cov-report=term $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) postgres-check
	$(BIN)/python bench/store.py --write-docs
	$(BIN)/python bench/index.py --write-docs
	$(BIN)/python bench/search.py --write-docs
	$(BIN)/python bench/memory.py --write-docs
	$(BIN)/python bench/load.py --write-docs
	$(BIN)/python bench/staleness.py --write-docs
	$(BIN)/python bench/scale.py --write-docs
	$(BIN)/python bench/lattice.py --write-docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
