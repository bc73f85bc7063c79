# sslbench: the two commands a newcomer needs are `make bench` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup bench test unit rig-up rig-down benchmark lint clean

# An editable install leaves the package uncompiled, and where PYTHONDONTWRITEBYTECODE is set every `sslbench`
# would compile it anew (50 ms of a one-host run): compiled here, as pip does for a normal install.
setup: $(STAMP)
	@$(BIN)/python -m compileall -q orchestrator

# Reinstall only when the project description changes.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,plots]'
	touch $(STAMP)

# Benchmark this machine through Ansible and print the table.
bench: setup
	$(BIN)/sslbench run --seconds 1

# Build the loopback test fleet (needs root and Debian's packages), then run every test.
test: setup rig-up
	$(BIN)/pytest -q -ra

# Unit tests only: no test hosts needed.
unit: setup
	$(BIN)/pytest -q -ra tests/unit

rig-up: setup
	$(BIN)/python tests/rig/rig.py up

rig-down:
	$(BIN)/python tests/rig/rig.py down

# Performance targets, measured (not asserted): prints ratios from one run.
benchmark: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Types (mypy --strict on the package, which ships py.typed), the playbooks (ansible-lint), and the shell scripts
# (shellcheck --shell=sh: the hosts' scripts and the rig's stand-ins; tests/unit/test_shell_lint.py lists them).
lint: setup
	$(BIN)/mypy --strict orchestrator
	$(BIN)/ansible-lint playbooks/
	@command -v shellcheck >/dev/null || { echo "make lint: needs shellcheck (apt-get install shellcheck)" >&2; exit 1; }
	$(BIN)/pytest -q -ra tests/unit/test_shell_lint.py

clean:
	rm -rf $(VENV) build *.egg-info
