# Every target bootstraps its own environment (.venv) from requirements.lock.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test serve stubs lint bench pg clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

## Plan the 500M KRW example fleet through a real gRPC server and client (embedded pricebook).
demo: $(STAMP)
	$(BIN)/fleetplan plan examples/500m_krw_portfolio.yaml

## Run the whole test suite (slow tests included; benchmarks are separate: make bench).
test: $(STAMP)
	$(BIN)/python -m pytest -q

## Run the gRPC server on 127.0.0.1:50051 (embedded pricebook; Ctrl-C stops it gracefully).
serve: $(STAMP)
	$(BIN)/fleetplan serve --address 127.0.0.1:50051

## A throwaway PostgreSQL for the plan store (needs Debian's postgresql package: apt-get install
## postgresql); prints the FLEETPLAN_STORE URL to use, Ctrl-C stops and removes it.
pg: $(STAMP)
	$(BIN)/python -m tests.pg

## Regenerate the checked-in gRPC/protobuf stubs from proto/.
stubs: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m api.codegen

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy api service solver pricebook clients tools store

bench: $(STAMP)
	$(BIN)/python -m bench.calibration_report
	$(BIN)/python -m bench.solver_scaling
	$(BIN)/python -m bench.whole_answer

clean:
	rm -rf $(VENV)
