// The card testbenches' check: says where and what, exits non-zero at the first mismatch.
#ifndef TB_CHECK_H
#define TB_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CHECK(c, ...)                                                                             \
	do {                                                                                      \
		if (!(c)) {                                                                       \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                      \
			fprintf(stderr, __VA_ARGS__);                                             \
			fputc('\n', stderr);                                                      \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

#endif
