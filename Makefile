# iTour suite. `make up` runs everything locally in demo mode; `make test` runs every test
# against a private Postgres and broker. See scripts/*.sh for what each target does.
.PHONY: up down test containers bench faults fleet proof clean help
.DEFAULT_GOAL := help

# Arguments for `swift test`, e.g. make test ARGS='--filter FeedTests'.
ARGS ?=

help:
	@echo "make up      start Postgres, broker and the four services in demo mode (.run/)"
	@echo "make down    drain the broker, then stop everything make up started"
	@echo "make test    swift tests + Python tests against a private Postgres/broker"
	@echo "             ARGS='--filter X' for swift test; PYTEST_ARGS='-k Y' for pytest"
	@echo "make containers  build the images and run the suite from them (compose, kube play)"
	@echo "make bench   load test (scripts/bench.sh)"
	@echo "make faults  fault-injection runs (scripts/faults.sh)"
	@echo "make fleet   two of every service under load, replicas killed, restarted and scaled in (scripts/fleet.sh)"
	@echo "make proof   end-to-end proof run (scripts/proof.sh)"
	@echo "make clean   remove .run/ (databases, logs, pid files); keeps .venv, .local, .build"

up:
	@scripts/up.sh

down:
	@scripts/down.sh

test:
	@scripts/test.sh $(ARGS)

containers:
	@scripts/containers.sh

bench faults fleet proof:
	@if [ -x scripts/$@.sh ]; then scripts/$@.sh; else echo "make $@: not yet (scripts/$@.sh does not exist)"; fi

# Stops what is running first: removing a live cluster's files would leave orphans behind.
clean:
	@DRAIN=0 scripts/down.sh >/dev/null 2>&1 || true
	@scripts/broker.sh stop .run/test-broker.pid 9094 .run/logs/test-broker.log >/dev/null 2>&1 || true
	@scripts/postgres.sh stop .run/test-pg 5434 >/dev/null 2>&1 || true
	@for d in .run/pg .run/test-pg; do [ -L $$d ] && rm -rf "$$(readlink -f $$d)"; done; true
	rm -rf .run
