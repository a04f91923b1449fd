# Thin wrapper over CMake. `make deps` installs the system packages; `make` builds Release;
# `make test` runs every suite (host, then aarch64 NEON under qemu); `make run` is the main job.
BUILD      ?= build
BUILD_NEON ?= build-aarch64
BUILD_SAN  ?= build-sanitize
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
SHARED     ?= ../shared
SUDO       := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

DEPS := cmake g++ binutils make libgtest-dev libbenchmark-dev libxsimd-dev nlohmann-json3-dev \
        libpcre2-dev libcli11-dev libedit-dev libcpp-httplib-dev g++-aarch64-linux-gnu \
        qemu-user tmux clang libclang-rt-14-dev libomp-dev clang-format nodejs \
        chromium nginx

.PHONY: all build deps test test-host test-neon test-sanitize test-tsan fuzz-build fuzz fuzz-smoke \
        run bench bench-kernels format format-check clean

all: build

# npm (the OpenAI client and chat page tests) only where it is missing: NodeSource's nodejs
# bundles it and conflicts with Debian's npm package; Debian's nodejs needs that package.
deps:
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(DEPS)
	command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    --no-install-recommends npm

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

test: test-host test-neon

test-host: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# NEON kernels, cross-compiled and run under qemu, with and without the dotprod extension.
test-neon:
	cmake -S . -B $(BUILD_NEON) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	      -DLILA_CORE_ONLY=ON -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_NEON) -j $(JOBS)
	QEMU_CPU=cortex-a53 LILA_EXPECT_ISA=neon ctest --test-dir $(BUILD_NEON) --output-on-failure -j $(JOBS)
	QEMU_CPU=max LILA_EXPECT_ISA=neon_dotprod ctest --test-dir $(BUILD_NEON) --output-on-failure -j $(JOBS)

# The sanitizer and fuzz builds at -O1, the level the ASan, TSan and libFuzzer documentation
# use: at -O2 the unrolled SIMD kernels took minutes a file under the sanitizers
# (x86/packed_avx2.cpp with GCC's ASan+UBSan: 380 s, 56 s at -O1; 32 s in Release).
SAN_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG"

# Every suite under AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer; any
# report fails its test.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

test-sanitize:
	cmake -S . -B $(BUILD_SAN) $(SAN_FLAGS) -DLILA_SANITIZE=address,undefined
	cmake --build $(BUILD_SAN) -j $(JOBS)
	$(SAN_ENV) ctest --test-dir $(BUILD_SAN) --output-on-failure -j $(JOBS)

# The OpenMP kernels under ThreadSanitizer. GCC's libgomp is not instrumented, so its
# barriers look like races; this build uses clang with LLVM's libomp, whose Archer tool
# (libarcher) tells TSan about OpenMP's synchronisation. See docs/reliability.md.
LLVM_LIB := $(shell llvm-config-14 --libdir 2>/dev/null || echo /usr/lib/llvm-14/lib)
test-tsan:
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_CXX_COMPILER=clang++ $(SAN_FLAGS) \
	      -DLILA_CORE_ONLY=ON -DLILA_SANITIZE=thread
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target test-ggml-lite
	OMP_TOOL_LIBRARIES=$(LLVM_LIB)/libarcher.so \
	    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1 \
	    OMP_NUM_THREADS=4 ctest --test-dir $(BUILD_TSAN) --output-on-failure -j $(JOBS)

# libFuzzer targets (tests/fuzz) under ASan+UBSan: `make fuzz` runs each FUZZ_SECONDS
# (default 60; FUZZ_TARGETS="gguf ..." for some), `make fuzz-smoke` 15 s each for CI.
# The corpora grow in $(BUILD_FUZZ)/corpus; findings land in $(BUILD_FUZZ)/findings.
fuzz-build:
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_CXX_COMPILER=clang++ $(SAN_FLAGS) \
	      -DLILA_FUZZ=ON -DLILA_BUILD_TESTS=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz-all

fuzz: fuzz-build
	tests/fuzz/run.sh $(BUILD_FUZZ) $(SHARED) $(FUZZ_SECONDS) $(JOBS) $(FUZZ_TARGETS)

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=15

# The reference model: models/ first, then the shared folder.
STORIES_BIN := $(firstword $(wildcard models/stories260K.bin $(SHARED)/models/stories260K.bin))
STORIES_TOK := $(firstword $(wildcard models/tok512.bin $(SHARED)/models/tok512.bin))

models/stories260K.gguf: | build
	@if [ -z "$(STORIES_BIN)" ] || [ -z "$(STORIES_TOK)" ]; then \
	  echo "stories260K.bin and tok512.bin not found in models/ or $(SHARED)/models/:"; \
	  echo "download them from https://huggingface.co/karpathy/tinyllamas/tree/main/stories260K"; \
	  exit 1; fi
	@mkdir -p models
	$(BUILD)/lila convert $(STORIES_BIN) --tokenizer $(STORIES_TOK) -o $@ --type q8_0

run: build models/stories260K.gguf
	$(BUILD)/lila chat -m models/stories260K.gguf

# `make bench`: the table of docs/PERF.md. Converts the random-weight TinyLlama-1.1B preset
# once per type into models/ (about 4.5 GB in all) and runs lila bench on each, then the
# long-context decode test. Minutes of work on purpose: not part of `make test` or CI.
BENCH_TYPES ?= f16 q8_0 q4_0 q4_k_m
BENCH_ARGS  ?= -p 128,512 -n 32 -t 1,2 -r 3
BENCH_MODELS := $(BENCH_TYPES:%=models/tinyllama-1.1b-%.gguf)

models/tinyllama-1.1b-%.gguf: | build
	$(BUILD)/lila convert --random tinyllama-1.1b --type $* -o $@

bench: build $(BENCH_MODELS)
	for m in $(BENCH_MODELS); do $(BUILD)/lila bench -m $$m $(BENCH_ARGS) || exit 1; done
	$(BUILD)/lila bench -m models/tinyllama-1.1b-q4_0.gguf -p 0 -n 32 -d 128,2048 -t 1,2 -r 3

# Kernel micro-benchmarks (docs/kernels.md).
bench-kernels: build
	$(BUILD)/bench-kernels

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

# Fails, listing the places, when any tracked source differs from what clang-format writes.
format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD_NEON) $(BUILD_SAN) $(BUILD_TSAN) $(BUILD_FUZZ)
