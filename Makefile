# Paddock: `make run` sets up this machine and starts Paddock; `make test` sets up and runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := run

.PHONY: setup build run test lint bench clean

setup:
	@bash scripts/setup.sh

build:
	@npm run build --silent

run: setup
	npx paddock serve --generate-key

test: setup
	@echo "==> lint and type-check"
	npx biome check .
	npx tsc -p tsconfig.tests.json
	@echo "==> tests"
	PADDOCK_TEST_DATABASE_URL="$$(bash scripts/test-postgres.sh)" npx vitest run

lint:
	npx biome check .

bench: setup
	node --conditions=@paddock/source --import tsx bench/run.ts

clean:
	rm -rf packages/*/dist packages/*/*.tsbuildinfo
