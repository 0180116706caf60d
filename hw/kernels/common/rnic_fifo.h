/* FIFOs between the stages of a kernel, as registers clocked once a cycle.
 *
 * A stage sees a FIFO as it was at the last clock edge: its consumer reads the head and pops, its
 * producer checks the room and pushes, and both take effect at the edge (rnic_<name>_edge, called
 * by the kernel after all its stages), so what a stage writes in clock t is seen by the next stage
 * at t+1 and the order in which the stages are called in a clock changes nothing. At most one push
 * and one pop a clock. The room a producer sees does not count the pop of the same clock, so a
 * FIFO of depth D streams one entry a clock with D >= 2. Its count is a register, as a FIFO's
 * flags are in hardware. A push writes its slot at once: the consumer cannot see it before the
 * edge (the slot is the head only while the FIFO is empty, and then it reads nothing), and a
 * producer pushes only into room, so no entry it may read is overwritten.
 *
 * Vitis HLS builds each as a FIFO between the processes of a DATAFLOW region (hls::stream, whose
 * empty/full are registered the same way); this is the simulator's model of it. */
#ifndef RNIC_FIFO_H
#define RNIC_FIFO_H

#include <stdint.h>

/* RNIC_FIFO(name, type, log2 depth): rnic_<name>_t and its functions. */
#define RNIC_FIFO(name, type, log2)                                                               \
	typedef struct {                                                                          \
		type q[1u << (log2)];                                                             \
		uint8_t rd, wr, n;   /* read, write index and count as of the last edge */        \
		uint8_t push, pop;   /* this clock's, applied at the edge */                      \
	} rnic_##name##_t;                                                                        \
	static inline uint32_t rnic_##name##_count(const rnic_##name##_t *f)                      \
	{                                                                                         \
		return f->n & ((2u << (log2)) - 1);                                               \
	}                                                                                         \
	static inline uint32_t rnic_##name##_room(const rnic_##name##_t *f)                       \
	{                                                                                         \
		return (1u << (log2)) - rnic_##name##_count(f);                                   \
	}                                                                                         \
	static inline const type *rnic_##name##_head(const rnic_##name##_t *f)                    \
	{                                                                                         \
		return &f->q[f->rd & ((1u << (log2)) - 1)];                                       \
	}                                                                                         \
	static inline void rnic_##name##_push(rnic_##name##_t *f, const type *v)                  \
	{                                                                                         \
		f->push = 1;                                                                      \
		if (v)                                                                            \
			f->q[f->wr & ((1u << (log2)) - 1)] = *v;                                  \
	}                                                                                         \
	/* the slot a push this clock fills, to build an entry in place (then _push(f, NULL)) */   \
	static inline type *rnic_##name##_slot(rnic_##name##_t *f)                                \
	{                                                                                         \
		return &f->q[f->wr & ((1u << (log2)) - 1)];                                       \
	}                                                                                         \
	static inline void rnic_##name##_pop(rnic_##name##_t *f)                                  \
	{                                                                                         \
		f->pop = 1;                                                                       \
	}                                                                                         \
	static inline void rnic_##name##_edge(rnic_##name##_t *f, int rst)                        \
	{                                                                                         \
		if (rst) {                                                                        \
			f->rd = f->wr = f->n = 0;                                                 \
		} else {                                                                          \
			if (f->push)                                                              \
				f->wr = (f->wr + 1) & ((1u << (log2)) - 1);                       \
			if (f->pop)                                                               \
				f->rd = (f->rd + 1) & ((1u << (log2)) - 1);                       \
			f->n = (uint8_t)(f->n + f->push - f->pop);                                \
		}                                                                                 \
		f->push = f->pop = 0;                                                             \
	}

#endif
