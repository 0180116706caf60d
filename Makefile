# RNIC: open RDMA NIC for Alveo cards, with its full-system simulation.
#
#   make demo    set up, build, boot two simulated NICs and run the RDMA WRITE demo
#   make test    set up, build and run every test (ends with "N passed, N failed")
#   make vm-demo  two Linux VMs, each with a simulated card as its PCIe device: Debian's tools through rnic.ko
#   make interop-tools   Debian's verbs tools and perftest between two simulated NICs (a table)
#   make sim-up / sim-down   two simulated NICs for your own verbs programs (scripts/rnic-run)
#
# Each part keeps its rules in its own fragment, included below.

.DEFAULT_GOAL := demo
SHELL := /bin/bash

ROOT := $(abspath .)
BUILD := $(ROOT)/build
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
SPEC_INC := $(ROOT)/spec/gen

CC := gcc
CXX := g++
CFLAGS_COMMON := -O2 -g -Wall -Wextra -Werror -std=gnu11
BUILD_ID := $(shell git rev-parse --short=8 HEAD 2>/dev/null || echo 0)
BUILD_TIME := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: demo test vm-demo bench soak fuzz interop-tools sim-up sim-down setup spec spec-check all clean

setup:
	bash scripts/setup.sh

spec:
	python3 spec/gen.py

spec-check:
	python3 spec/gen.py --check

include hw/kernels/kernels.mk
include hw/rtl/rtl.mk
include firmware/firmware.mk
include driver/driver.mk
include host-lib/host-lib.mk
include sim/sim.mk
include tests/tests.mk
include bitstreams/bitstreams.mk

all: $(ALL_TARGETS)

# demo and test set up first, in a separate make run, because the fragments above ask the
# venv for paths (e.g. PicoRV32's source) when they are read.
demo:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/run_demo.py

# the build on every core, with what the tests build for themselves (Yosys runs on one)
test:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all $(TBLCHK_LIB) $(TBLCHK)/sim/rnic-sim $(SYNTH_TABLE)
	$(PY) -m pytest -q --durations=25 tests

# two Linux VMs (QEMU, Debian's kernel, rnic.ko) on two simulated cards: ibv_rc_pingpong and perftest VM to VM
vm-demo:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/qemu/vm_demo.py

# the host path's instruction count, the transport's figures (simulated time), its long run on a faulty link
bench:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/transport.py bench
	$(PY) tests/hls_timing.py
	$(PY) tests/kernel_graph.py

soak:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/transport.py soak
	RNIC_OPEN_CLOSE_ROUNDS=10000 $(PY) -m pytest -q tests/test_sim.py -k open_close_while_traffic
	RNIC_CM_ROUNDS=500 $(PY) -m pytest -q tests/test_rdmacm.py -k made_and_broken

# mutated frames into the RX kernel, mutated firmware commands and the CM's MADs, commands and
# timers (built with ASan and UBSan): 10^7 frames, 10^6 commands, 10^7 CM steps, a few minutes
fuzz:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(BUILD)/fuzz/fuzz_rx 10000000
	$(BUILD)/fw/test_fw_asan --fuzz 1000000
	$(BUILD)/fw/test_fw_asan --fuzz-cm 10000000

# Debian's unmodified ibverbs-utils, perftest and pyverbs through the project's libibverbs.so.1
interop-tools:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/interop.py

sim-up:
	bash scripts/setup.sh
	$(MAKE) -j$(shell nproc) all
	$(PY) sim/nics.py up

sim-down:
	$(PY) sim/nics.py down

clean:
	rm -rf $(BUILD)
