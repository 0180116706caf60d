/* Reset entry: global and stack pointers, zeroed .bss, then main() (which never returns). */
	.section .text.start
	.global _start
_start:
	.option push
	.option norelax
	la gp, __global_pointer$
	.option pop
	la sp, __stack_top
	la t0, __bss_start
	la t1, __bss_end
	/* eight words a turn (link.ld aligns both ends to 32 bytes): the count and the branch of a
	 * turn shared by eight stores, so that 170 KiB of .bss are zero soon after reset */
	bgeu t0, t1, 2f
1:	sw zero, 0(t0)
	sw zero, 4(t0)
	sw zero, 8(t0)
	sw zero, 12(t0)
	sw zero, 16(t0)
	sw zero, 20(t0)
	sw zero, 24(t0)
	sw zero, 28(t0)
	addi t0, t0, 32
	bltu t0, t1, 1b
2:	call main
3:	j 3b
