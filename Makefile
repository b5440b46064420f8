# The testbed's entry points. `make up` and `make test` install what they need
# (Debian packages, the compose plugin, the venv, generated code, images) first.

SHELL := /bin/bash
PY := .venv/bin/python
COMPOSE := docker compose
RUN_ID ?= $(shell date -u +%Y%m%d-%H%M%S)
export RUN_ID
PACKAGES := domain bugs admin client harness broker_node controller zkdata rpc eventlog security rundir chaos pipeline testbed bench

.PHONY: help setup host venv proto secrets compose-plugin images up down ps logs cluster \
        rotate-certs test lint test-unit test-integration fuzz test-docker bench bench-quick bench-produce \
        bench-produce-quick clean-images clean report docs chaos-list chaos-all chaos-heal chaos-bugs chaos-hunt chaos-soak test-chaos cluster-up

help:
	@echo "make up                 build what is missing, start the cluster, show it (DISK_LAYER=1: disk layers; FLUSH=1: fsync every message)"
	@echo "make test               lint + unit + integration + docker tiers"
	@echo "make down               stop the cluster and remove its volumes (and disk layers)"
	@echo "make cluster            show ZooKeeper modes, brokers and epochs, the controller"
	@echo "make rotate-certs       replace the CA and every certificate while the cluster serves"
	@echo "make images             (re)build the images whose inputs changed"
	@echo "make lint | test-unit | test-integration | test-docker"
	@echo "make fuzz               the fuzzers of hostile requests and znodes, longer (FUZZ_EXAMPLES=5000)"
	@echo "make chaos-<scenario>   run one chaos scenario on the cluster (SEED=1; FLUSH=1 for the fsync-every-message cluster; make chaos-list names them)"
	@echo "make chaos-all          every scenario, then one table of verdicts and recovery times"
	@echo "make chaos-heal         undo whatever faults a killed chaos run left"
	@echo "make chaos-bugs         hunt the historical bug switches on a project of its own (BUGS=a,b SEEDS=1,2)"
	@echo "make chaos-hunt         hunt them blind: the generic generator with coverage feedback (BUGS=a,b HUNT_RUNS=10)"
	@echo "make chaos-soak         the fixed build's false alarms: fresh generic schedules, no switch (SOAK_RUNS=100)"
	@echo "make chaos-compare      judge a change: this work tree against HEAD under the same faults (BASE=ref HEAD=dir SCENARIOS=a,b SEEDS=1,2)"
	@echo "make report             verdicts, figures and pictures of every run under runs/ (RUNS=dir ...)"
	@echo "make docs               regenerate the pages made from the code (docs/scenarios.md)"
	@echo "make bench              every measure at scale vs. floors of the same run, one table (BENCH_ARGS=--partitions 100000 ...)"
	@echo "make bench-quick        the same, every measure at 1,000 partitions"
	@echo "make bench-produce      acks=all and acks=1 produce throughput vs. a gRPC round-trip floor"
	@echo "make bench-produce-quick the same for 3 s per acks setting"
	@echo "make bench-pipeline     the report's Spark job over 1,000,000 records vs. a plain read (also in make bench)"
	@echo "make bench-pipeline-quick the same over 100,000 records"
	@echo "make bench-checker      the history checker over 1,000,000 operations vs. a plain decode, with peak memory"
	@echo "make bench-checker-quick the same over 100,000 operations"

host:
	@scripts/ensure-host-packages.sh

compose-plugin:
	@scripts/ensure-compose-plugin.sh

venv:
	@scripts/ensure-venv.sh

proto: venv
	@scripts/gen-proto.sh $(PY)

# the cluster's ZooKeeper credentials in .secrets/ (kept once made) and runs/, both
# usable by the containers' non-root user
secrets: venv
	@scripts/ensure-secrets.sh $(PY)

setup: host compose-plugin venv proto secrets

images: setup
	@scripts/build-images.sh $(PY)

# DISK_LAYER=1 puts each broker's log directory behind a disk layer on the host, which the
# disk faults act through (docs/chaos.md, Disk faults; needs root and FUSE, else the
# directories are plain ones)
DISK_LAYER ?=
COMPOSE_UP = if [ -n "$(DISK_LAYER)" ]; then \
	    layers=$$($(PY) -m harness.disk_layers up) || exit 1; \
	    export $$layers COMPOSE_FILE=docker-compose.yml:docker-compose.disk.yml; \
	fi; $(COMPOSE) up -d --wait
up: images
	@scripts/ensure-run-dir.sh runs/$(RUN_ID)
	@echo "==> starting the cluster (run $(RUN_ID), events in runs/$(RUN_ID)/events/)"
	@$(COMPOSE_UP)
	@$(PY) -m testbed cluster --wait-brokers 3

cluster: venv proto
	@$(PY) -m testbed cluster

# a new CA and certificates, one server restart at a time (docs/security.md, Rotating the CA)
rotate-certs: venv proto
	@$(PY) -m security rotate --dir .secrets

down: compose-plugin
	@$(COMPOSE) down -v --remove-orphans
	@if [ -x $(PY) ]; then $(PY) -m harness.disk_layers down --remove; fi

ps:
	@$(COMPOSE) ps

logs:
	@$(COMPOSE) logs --tail=100

lint: setup
	@echo "==> ruff"
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@echo "==> import contracts"
	@.venv/bin/lint-imports --no-cache
	@echo "==> mypy"
	@.venv/bin/mypy $(PACKAGES)
	@# each test tier has its own conftest module, so each is checked on its own
	@for tier in unit integration docker chaos; do .venv/bin/mypy tests/$$tier || exit 1; done

test-unit: setup
	@.venv/bin/pytest tests/unit -q

# The fuzzers of hostile requests and znodes, with random draws and FUZZ_EXAMPLES examples
# each (hypothesis profile `long`, tests/unit/conftest.py).
FUZZ_EXAMPLES ?= 5000
fuzz: setup
	@HYPOTHESIS_PROFILE=long FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) .venv/bin/pytest tests/unit -m fuzz -q

test-integration: setup
	@.venv/bin/pytest tests/integration -q

test-docker: images
	@.venv/bin/pytest tests/docker -q

test: images lint
	@echo "==> tests (unit, integration, docker, chaos)"
	@.venv/bin/pytest tests/unit tests/integration tests/docker tests/chaos -q --durations=30

test-chaos: images
	@.venv/bin/pytest tests/chaos -q

# Chaos scenarios on the default compose cluster (brought up first). SEED picks the
# schedule; CHAOS_ARGS passes more options (e.g. --duration 120 for chaos-random).
SEED ?= 1
# The cluster's inter-broker protocol (`make up IBP=2.7`, `make chaos-all IBP=2.7`): 2.6,
# leaders write ISR changes to ZooKeeper; 2.7, they send AlterIsr to the controller. A
# chaos run refuses a cluster started with the other one.
IBP ?= $(or $(INTER_BROKER_PROTOCOL),2.6)
export INTER_BROKER_PROTOCOL := $(IBP)
# The brokers' flush policy (`make up FLUSH=1`, `make chaos-power-loss FLUSH=1`): after how
# many appended messages a broker fsyncs its log (LOG_FLUSH_INTERVAL_MESSAGES; unset:
# Kafka's default, never; docs/chaos.md, Power loss). A chaos run given FLUSH refuses a
# cluster started with another one.
FLUSH ?=
ifneq ($(FLUSH),)
export LOG_FLUSH_INTERVAL_MESSAGES := $(FLUSH)
endif
CHAOS_POLICY = --inter-broker-protocol $(IBP) $(if $(FLUSH),--log-flush-interval-messages $(FLUSH))
chaos-list: setup
	@$(PY) -m chaos list

# the cluster as it runs (started if it is not; never recreated, so its event logs go on)
cluster-up: images
	@scripts/ensure-run-dir.sh runs/$(RUN_ID)
	@$(COMPOSE_UP) --no-recreate

# The disk scenarios' faults act through disk layers: a cluster they start has them, its
# brokers in notify mode (a failed log directory is reported to the controller, as by a
# Kafka broker with other live directories). A cluster already running without them is
# refused by the run, which says how to start one (`make down` first).
DISK_SCENARIOS := disk-failure slow-disk disk-full power-loss
$(addprefix chaos-,$(DISK_SCENARIOS)): DISK_LAYER = 1
$(addprefix chaos-,$(DISK_SCENARIOS)): export ON_LOG_DIR_FAILURE ?= notify

chaos-all: cluster-up
	@$(PY) -m chaos all --seed $(SEED) $(CHAOS_POLICY) $(CHAOS_ARGS)

chaos-heal: setup
	@$(PY) -m chaos heal

# The bug hunt (docs/bugs.md): its own compose project (testbed-bugs), never the default
# one. BUGS picks switches (default all), SEEDS the seeds (default 1..5); CHAOS_ARGS passes
# more (e.g. --runs 3 --max-shrink 4).
BUGS ?=
SEEDS ?=
chaos-bugs: images
	@$(PY) -m chaos bugs $(if $(BUGS),--bugs $(BUGS)) $(if $(SEEDS),--seeds $(SEEDS)) $(CHAOS_ARGS)

# The blind hunt (docs/bugs.md, "Blind hunt"): no plan, the generic generator's schedules
# chosen by coverage, on a project of its own (testbed-hunt). BUGS picks switches (default
# all), HUNT_RUNS the buggy runs per switch (default 10), SEEDS the seeds fresh schedules take
# first; CHAOS_ARGS passes more (e.g. --run-seconds 60 --hunt-seed 2).
HUNT_RUNS ?=
chaos-hunt: images
	@$(PY) -m chaos hunt $(if $(BUGS),--bugs $(BUGS)) $(if $(HUNT_RUNS),--runs $(HUNT_RUNS)) $(if $(SEEDS),--seeds $(SEEDS)) $(CHAOS_ARGS)

# The fixed build's soak (docs/bugs.md, "False alarms on the fixed build"): fresh generic
# schedules, seeds no hunt draws, on a project of its own (testbed-soak) with no switch on;
# SOAK_RUNS runs (default 100), SEEDS the seeds to run first.
SOAK_RUNS ?=
chaos-soak: images
	@$(PY) -m chaos soak $(if $(SOAK_RUNS),--runs $(SOAK_RUNS)) $(if $(SEEDS),--seeds $(SEEDS)) $(CHAOS_ARGS)

# Judging a change (docs/chaos.md, "Comparing two builds"): HEAD (default: this work tree,
# uncommitted changes included) against BASE (default: the repository's HEAD commit), each
# a git ref or a work tree, under the same seeded faults, each build on a compose project
# of its own (testbed-compare-base, testbed-compare-head). SCENARIOS and SEEDS narrow it.
.PHONY: chaos-compare
BASE ?= HEAD
HEAD ?= .
SCENARIOS ?=
chaos-compare: images
	@$(PY) -m chaos compare --base $(BASE) --head $(HEAD) $(if $(SCENARIOS),--scenarios $(SCENARIOS)) $(if $(SEEDS),--seeds $(SEEDS)) $(CHAOS_ARGS)

chaos-%: cluster-up
	@$(PY) -m chaos run $* --seed $(SEED) $(CHAOS_POLICY) $(CHAOS_ARGS)

# The PySpark report over chaos runs (runs/ by default; RUNS="dir1 dir2" picks others).
RUNS ?= runs
REPORT_OUT ?= runs/report
report: setup
	@$(PY) -m pipeline report $(foreach r,$(RUNS),--runs $(r)) --out $(REPORT_OUT) $(if $(MASTER),--master $(MASTER))

# the pages generated from the code; a unit test fails when one is stale
docs: venv proto
	@$(PY) -m chaos.cli.scenarios_doc
	@$(PY) -m eventlog.doc

# One benchmark invocation per line; each prints its table and adds its JSON lines to
# bench/results/latest.jsonl (lines of the same RUN_ID are kept together).
bench: setup
	@$(PY) -m bench all $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-pipeline

bench-quick: setup
	@$(PY) -m bench all --quick $(BENCH_ARGS)

bench-produce: setup
	@$(PY) -m bench.produce $(BENCH_ARGS)

bench-produce-quick: setup
	@$(PY) -m bench.produce --quick $(BENCH_ARGS)

# The PySpark report's jobs over 1,000,000 synthetic records vs. a plain Spark read of them.
.PHONY: bench-pipeline bench-pipeline-quick
bench-pipeline: setup
	@$(PY) -m bench.pipeline $(PIPELINE_BENCH_ARGS)

bench-pipeline-quick: setup
	@$(PY) -m bench.pipeline --quick $(PIPELINE_BENCH_ARGS)

# The history checker over a generated history of 1,000,000 operations vs. a plain decode
# of the same lines, and the peak memory of each against a history of 250,000.
.PHONY: bench-checker bench-checker-quick
bench-checker: setup
	@$(PY) -m bench.checker $(CHECKER_BENCH_ARGS)

bench-checker-quick: setup
	@$(PY) -m bench.checker --quick $(CHECKER_BENCH_ARGS)

clean-images:
	-@docker image rm testbed-broker:latest testbed-zookeeper:latest testbed-base:latest

clean:
	rm -rf .build testbed_rpc .mypy_cache .ruff_cache .pytest_cache
