# The README's commands, by name.
.PHONY: run test bench build shaders format

run:
	scripts/run.sh

test:
	scripts/test.sh

bench:
	bench/run.sh

build:
	swift build

shaders:
	scripts/compile-shaders.sh

format:
	swift format --in-place --recursive Package.swift Sources Tests
