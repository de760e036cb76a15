# The two commands a new user needs: `make run` and `make test`. Both build .venv themselves.
#
#   make test         lint (ruff + mypy), generated code fresh, then pytest without the `bench` and `soak`
#                     tests: unit, e2e (real PostgreSQL, real gRPC), spark; the short versions of the long runs
#                     (a 6 s multi-gateway consistency run, a tiny `make bench` run); SLOW=1 adds `slow` tests;
#                     in TEST_WORKERS pytest-xdist processes, a test file at a time (default 2; 0: one process)
#   make test-bench   the tests marked `bench` or `soak`: the bench_read and bench_txns smoke runs, the Hive
#                     Metastore target (a JVM), the 20 s multi-gateway consistency run
#   make lint         ruff check and mypy (configured in pyproject.toml)
#   make bench, bench-grpcio, bench-txns, bench-all, consistency, faults, soak-memory: the figures and the long runs
#                     themselves (below)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTO_SRC := $(wildcard protos/metastore/v1/*.proto)
ARGS ?=
# Two test processes keep two cores busy where one left about half the machine idle (waits on servers,
# sleeps, JVM starts). On this project's 2-core machine (2026-11-29, runs of the suite one after another):
# 604, 462 and 331 s with two, 522 s with one between them; the machine's speed moves a lot from run to run.
# A file's tests stay in one process (--dist loadfile): several files start a reference Hive Metastore once.
TEST_WORKERS ?= 2

.PHONY: run test test-bench lint protos protos-check bench bench-grpcio bench-txns bench-all bench-compaction \
	consistency faults soak-memory jdbc-driver pgbouncer

# What `make test` leaves to `make test-bench` (markers registered in pyproject.toml).
LONG_MARKERS := bench or soak

# The C extension (store/cache/_frames.c) is built by the editable install: a change to it rebuilds.
$(STAMP): pyproject.toml setup.py store/cache/_frames.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## jdbc-driver: PostgreSQL's JDBC driver for the reference Hive Metastore on PostgreSQL (the lock and statistics
## differentials, the Hive peer of bench-txns): Debian's /usr/share/java/postgresql.jar when installed, or else the
## same jar taken from that Debian package into .venv (`apt-get download`, no root needed). Best effort: where
## neither works, those tests skip and say why.
# (where loadtest/hms.py looks: VENV_JDBC_JAR)
JDBC_JAR := $(VENV)/share/java/postgresql.jar
jdbc-driver: $(STAMP)
	@if [ -e /usr/share/java/postgresql.jar ] || [ -e $(JDBC_JAR) ]; then exit 0; fi; \
	tmp=$$(mktemp -d); \
	if (cd $$tmp && apt-get download libpostgresql-jdbc-java) >$$tmp/log 2>&1 \
	   && dpkg-deb -x $$tmp/libpostgresql-jdbc-java_*.deb $$tmp/root \
	   && mkdir -p $(dir $(JDBC_JAR)) && cp $$tmp/root/usr/share/java/postgresql.jar $(JDBC_JAR); then \
	  echo "PostgreSQL JDBC driver: $(JDBC_JAR) (from Debian's libpostgresql-jdbc-java)"; \
	else \
	  echo "no PostgreSQL JDBC driver (apt-get download libpostgresql-jdbc-java failed: $$(tail -n 1 $$tmp/log));" \
	       "the tests of the Hive Metastore on PostgreSQL will skip"; \
	fi; rm -rf $$tmp

## pgbouncer: PgBouncer for the test that runs the gateway behind it (tests/e2e/test_pgbouncer.py): the one on
## PATH, or Debian's package with the two libraries it needs that a machine may lack, unpacked into .venv
## (`apt-get download`, no root needed). Best effort: where neither works, that test skips and says why.
PGBOUNCER_ROOT := $(VENV)/pgbouncer
pgbouncer: $(STAMP)
	@if command -v pgbouncer >/dev/null || [ -x $(PGBOUNCER_ROOT)/usr/sbin/pgbouncer ]; then exit 0; fi; \
	tmp=$$(mktemp -d); \
	if (cd $$tmp && apt-get download pgbouncer libc-ares2 libevent-2.1-7) >$$tmp/log 2>&1 \
	   && for deb in $$tmp/*.deb; do dpkg-deb -x $$deb $$tmp/root; done \
	   && [ -x $$tmp/root/usr/sbin/pgbouncer ] && rm -rf $(PGBOUNCER_ROOT) && mv $$tmp/root $(PGBOUNCER_ROOT); then \
	  echo "PgBouncer: $(PGBOUNCER_ROOT)/usr/sbin/pgbouncer (from Debian's pgbouncer)"; \
	else \
	  echo "no PgBouncer (apt-get download pgbouncer failed: $$(tail -n 1 $$tmp/log)); tests/e2e/test_pgbouncer.py" \
	       "will skip"; \
	fi; rm -rf $$tmp

## run: set up .venv and serve on embedded PostgreSQL (pass flags with ARGS='--port 50052')
run: $(STAMP)
	$(VENV)/bin/metastore-gateway serve $(ARGS)

## test: set up .venv, lint, check generated code is fresh, run the suite except the `bench` and `soak` tests
test: $(STAMP) lint protos-check jdbc-driver pgbouncer
	$(PY) -m pytest -q -m 'not ($(LONG_MARKERS))' -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## test-bench: the benchmark smoke runs, the Hive Metastore target and the 20 s consistency run
test-bench: $(STAMP) jdbc-driver
	$(PY) -m pytest -q -m '$(LONG_MARKERS)' $(PYTEST_ARGS)

## lint: ruff and mypy over the whole tree (generated protos: their .pyi stubs are checked, not the code)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

## protos: regenerate the Python code from protos/ (never edit the generated files)
protos: $(STAMP)
	$(PY) -m grpc_tools.protoc -I . --python_out=. --pyi_out=. --grpc_python_out=. $(PROTO_SRC)

## protos-check: fail when the committed generated code differs from what protos/ produces
protos-check: $(STAMP)
	@tmp=$$(mktemp -d) && \
	$(PY) -m grpc_tools.protoc -I . --python_out=$$tmp --pyi_out=$$tmp --grpc_python_out=$$tmp $(PROTO_SRC) && \
	for f in $$(cd $$tmp && find protos -name '*_pb2*'); do \
	  cmp -s $$tmp/$$f $$f || { echo "stale generated code: $$f (run 'make protos' and commit)"; rm -rf $$tmp; exit 1; }; \
	done; rm -rf $$tmp; echo "generated code is fresh"

## bench: the hot read path side by side (gateway cached / cache off / echo floor / Thrift / Hive Metastore on
## PostgreSQL), targets one after another; rewrites its section of docs/benchmarks.md and docs/bench-read.png
## (a short run: BENCH_ARGS='--duration 5 --rounds 2 --machine-note "what else ran"')
bench: $(STAMP) jdbc-driver
	$(PY) -m loadtest.bench_read $(BENCH_ARGS)

## bench-grpcio: the cached read path and the echo floor served by each grpcio version (the pin's evidence);
## builds .bench-venvs/grpcio-<version> on first use
bench-grpcio: $(STAMP)
	$(PY) -m loadtest.bench_grpcio

## bench-txns: small write transactions, the gateway and the Hive Metastore 2.3.10 on PostgreSQL side by side
## (durable, 1 and 16 clients, txn manager only and plus 10 partitions), and the commit-to-visible lag across
## three gateways under that load, then each transaction RPC's costs alone (loadtest/txn_rpc_costs.py); rewrites
## their sections of docs/benchmarks.md (BENCH_TXNS_ARGS='--duration 5')
bench-txns: $(STAMP) jdbc-driver
	$(PY) -m loadtest.bench_txns --lag $(BENCH_TXNS_ARGS)
	$(PY) -m loadtest.txn_rpc_costs --out docs/benchmarks.md

## bench-all: every figure in docs/benchmarks.md (read path, grpcio versions, transactions, locks, cache, Spark)
bench-all: bench bench-grpcio bench-txns
	$(PY) -m loadtest.bench_locks
	$(PY) -m loadtest.bench_cache
	$(PY) -m loadtest.bench_spark

## bench-compaction: reads of a 100-delta partition before/after a major compaction, and the worker's
## throughput on local[2]; rewrites its section of docs/compaction-benchmarks.md
bench-compaction: $(STAMP)
	$(PY) -m pipeline.compactor.bench $(BENCH_ARGS)

## consistency: the long multi-gateway consistency run (three gateways + a cache-off oracle)
consistency: $(STAMP)
	$(PY) -m loadtest.consistency --duration 300

## faults: the fault-injection suite, each fault 3 times (PostgreSQL restarted -m fast and -m immediate, kill -9
## and SIGSTOP 20 s of a gateway, a vanished client) on three gateways under load (ARGS='--rounds 1 --keep')
faults: $(STAMP)
	$(PY) -m loadtest.faults $(ARGS)

## soak-memory: 20 minutes of churn over both protocols on one gateway: fails when its memory or open
## descriptors keep growing after the warm-up; rewrites its section of docs/benchmarks.md
soak-memory: $(STAMP)
	$(PY) -m loadtest.soak_memory --section docs/benchmarks.md $(ARGS)
