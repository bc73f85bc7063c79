# sslbench: the two commands a newcomer needs are `make bench` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NATIVE := build/native-parser/FINGERPRINT
# The parser's own tests, run a second time on its Python source (the full run uses the compiled build).
PARSER_TESTS := $(wildcard tests/unit/test_speed*.py) tests/unit/test_console.py tests/unit/test_cpuinfo.py \
                tests/unit/test_osinfo.py tests/unit/test_names.py
PURE_PARSER_TESTS := SSLBENCH_PURE_PYTHON=1 $(BIN)/pytest -q -p no:cacheprovider $(PARSER_TESTS)

.PHONY: setup bench test unit rig-up rig-down benchmark lint clean

setup: $(STAMP) $(NATIVE)

# Reinstall only when the project description changes.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,native]'
	touch $(STAMP)

# The parser compiled with mypyc (see orchestrator/parse/native.py), rebuilt when a parser source changes.
# Optional: without a C compiler it says so and the pure-Python parser runs (CI sets SSLBENCH_REQUIRE_NATIVE=1).
$(NATIVE): $(wildcard orchestrator/parse/*.py) | $(STAMP)
	$(BIN)/python -m orchestrator.parse.native_build $(if $(SSLBENCH_REQUIRE_NATIVE),--require)

# Benchmark this machine through Ansible and print the table.
bench: setup
	$(BIN)/sslbench run --seconds 1

# Build the loopback test fleet (needs root and Debian's packages), then run every test.
test: setup rig-up
	$(BIN)/pytest -q -ra
	$(PURE_PARSER_TESTS)

# Unit tests only: no test hosts needed.
unit: setup
	$(BIN)/pytest -q -ra -m 'not rig'
	$(PURE_PARSER_TESTS)

rig-up: setup
	$(BIN)/python tests/rig/rig.py up

rig-down:
	$(BIN)/python tests/rig/rig.py down

# Performance targets, measured (not asserted): prints ratios from one run.
benchmark: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: setup
	$(BIN)/ansible-lint playbooks/

clean:
	rm -rf $(VENV) build *.egg-info
