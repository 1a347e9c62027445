# Paddock: `make run` sets up this machine and starts Paddock; `make test` sets up and runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := run

.PHONY: setup build run test test-slow lint bench clean templates test-templates screenshots

# `make setup` builds the python, node, ubuntu, code-interpreter, e2b-base and e2b-code-interpreter
# templates, and `make test` the ones below too, then tests them all. `make templates` builds every template (TEMPLATE=id
# for one, FORCE=1 to rebuild); `make test-templates` builds them all and tests the desktop,
# browser and editor templates, the largest and slowest to build (docs/templates.md says why).
TEST_TEMPLATES := claude-code codex gemini-cli opencode qwen-code copilot-cli playwright

setup:
	@bash scripts/setup.sh

build:
	@npm run build --silent

run: setup
	npx paddock serve --generate-key

test: setup
	@echo "==> lint and type-check"
	npx biome check .
	npx depcruise packages --config .dependency-cruiser.cjs --output-type err
	npx tsc -p tsconfig.tests.json
	npx tsc -p packages/dashboard
	@echo "==> template images the tests use"
	npx paddock templates build $(TEST_TEMPLATES)
	@echo "==> tests"
	PADDOCK_TEST_DATABASE_URL="$$(bash scripts/test-postgres.sh)" npx vitest run
	@echo "==> the Python SDK (pytest against live servers, mypy --strict)"
	/usr/bin/python3 -m pytest sdk-python/tests

# The slow suites (test/**/*.slow.test.ts, docs/reliability.md): faults that restart the engine
# and the database under running sandboxes, kill servers and replicas, fill the data disk, and
# the resource attacks. They take the machine's engine down, so they run one file at a time and
# never beside `make test`.
test-slow: setup
	PADDOCK_TEST_SLOW=1 PADDOCK_TEST_DATABASE_URL="$$(bash scripts/test-postgres.sh)" npx vitest run

templates: setup
	npx paddock templates build $(TEMPLATE) $(if $(FORCE),--force)

test-templates: setup
	npx paddock templates build
	PADDOCK_TEST_GUI_TEMPLATES=1 npx vitest run

lint:
	npx biome check .
	npx depcruise packages --config .dependency-cruiser.cjs --output-type err

# The dashboard's screenshots in docs/screenshots/, taken in Chromium against a live server.
screenshots: setup
	node --conditions=@paddock/source --import tsx scripts/dashboard-screenshots.ts

bench: setup
	node --conditions=@paddock/source --import tsx bench/run.ts

clean:
	rm -rf packages/*/dist packages/*/*.tsbuildinfo
