/* The CM fuzzer of the firmware's harness (fuzz_cm.c) */
#ifndef FW_TESTS_FUZZ_CM_H
#define FW_TESTS_FUZZ_CM_H

#include <stdint.h>

/* n steps from the seed, on a NIC whose context memory was given: 0 if no invariant broke */
int fuzz_cm(uint64_t n, uint64_t seed);

#endif
