/* Reset entry: the hardware's protection set, global and stack pointers, zeroed .bss, the stack
 * painted, then main() (which never returns). The symbols come from link.ld and firmware.mk (the
 * spec's constants). */
	.section .text.start
	.global _start
_start:
	/* first, before anything else runs: code read-only and the only code (FW.CODE_END), the
	 * stack's guard band (FW.STACK_GUARD). Each register takes its first write after reset only,
	 * so nothing that runs later can move either. */
	la t1, __code_end
	lui t0, %hi(__fw_reg_code_end)
	sw t1, %lo(__fw_reg_code_end)(t0)
	la t1, __stack_guard
	lui t0, %hi(__fw_reg_stack_guard)
	sw t1, %lo(__fw_reg_stack_guard)(t0)
	.option push
	.option norelax
	la gp, __global_pointer$
	.option pop
	la sp, __stack_top
	/* eight words a turn (link.ld aligns both ends of each area to 32 bytes): the count and the
	 * branch of a turn shared by eight stores, so that 180 KiB of .bss are zero soon after reset */
	la t0, __bss_start
	la t1, __bss_end
	mv t2, zero
	call fill
	/* the stack filled with STACK_PAINT: what is still so was never used (rnic-sim reports the
	 * high-water mark) */
	la t0, __stack_bottom
	la t1, __stack_top
	lui t2, %hi(__stack_paint)
	addi t2, t2, %lo(__stack_paint)
	call fill
	call main
1:	j 1b

/* t2 into every word of [t0, t1): both 32-byte aligned; no stack (it is being painted) */
fill:
	bgeu t0, t1, 2f
1:	sw t2, 0(t0)
	sw t2, 4(t0)
	sw t2, 8(t0)
	sw t2, 12(t0)
	sw t2, 16(t0)
	sw t2, 20(t0)
	sw t2, 24(t0)
	sw t2, 28(t0)
	addi t0, t0, 32
	bltu t0, t1, 1b
2:	ret
