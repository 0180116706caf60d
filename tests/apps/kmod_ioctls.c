/*
 * Bad arguments to rnic.ko, from a process in a VM on a simulated card (tests/test_vm.py): each
 * is refused with the errno the driver gives, nothing of another process's is reachable, and an
 * unprivileged user is refused the device's 0600 node. Run as root; prints a line per check ("ok"
 * or "FAIL") and exits 1 if any failed. With "user": once udev has opened the node to all, the
 * unprivileged user opens it and its pinned memory is held to RLIMIT_MEMLOCK. With "contexts":
 * every context but the driver's can be opened at once, and no more (none is left held by a
 * process that died). With "removed": the card is unbound from the driver under mappings of the
 * doorbell page, the event queue and a ring (split in two, and copied by fork); each access to
 * them after that gets SIGBUS, none reaches the BAR or memory the driver freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rnic_spec.h"
#include "rnic_uapi.h"

#define DEV "/dev/rnic0"
#define STRIDE RNIC_UAPI_RING_STRIDE

static int fails;

static void expect(const char *what, int ret, int want)
{
	int got = ret < 0 ? errno : 0;

	if (got == want) {
		printf("ok   %s: %s\n", what, want ? strerror(want) : "done");
	} else {
		printf("FAIL %s: %s, want %s\n", what, got ? strerror(got) : "done", want ? strerror(want) : "done");
		fails++;
	}
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* a write (or read) of *p gets SIGBUS, or not */
static void expect_sigbus(const char *what, volatile uint32_t *p, int write, int want)
{
	struct sigaction sa = {.sa_handler = on_sigbus}, old;
	volatile int got = 1;

	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(bus_jmp, 1)) {
		if (write)
			*p = 0;
		else
			(void)*p;
		got = 0;
	}
	sigaction(SIGBUS, &old, NULL);
	printf("%s %s: %s\n", got == want ? "ok  " : "FAIL", what, got ? "SIGBUS" : "done");
	fails += got != want;
}

static int cmd(int fd, uint32_t opcode, struct rnic_uapi_cmd *c)
{
	c->opcode = opcode;
	return ioctl(fd, RNIC_IOCTL_CMD, c);
}

static int alloc_ring(int fd, uint64_t size, uint64_t *handle)
{
	struct rnic_uapi_alloc_ring r = {.size = size};
	int ret = ioctl(fd, RNIC_IOCTL_ALLOC_RING, &r);

	*handle = r.offset;
	return ret;
}

static int create_cq(int fd, uint64_t ring, uint8_t log, uint32_t *cqn)
{
	struct rnic_uapi_cmd c = {0};
	int ret;

	RNIC_CMDI_CREATE_CQ_BASE_SET(c.in, ring);
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(c.in, log);
	ret = cmd(fd, RNIC_CMD_CREATE_CQ, &c);
	*cqn = RNIC_CMDO_HANDLE_HANDLE_GET(c.out);
	return ret;
}

static int reg_mr(int fd, uint32_t pdn, uint64_t va, uint64_t len, uint32_t *key)
{
	struct rnic_uapi_cmd c = {0};
	int ret;

	RNIC_CMDI_REG_MR_PDN_SET(c.in, pdn);
	RNIC_CMDI_REG_MR_ACCESS_SET(c.in, 1); /* local write */
	RNIC_CMDI_REG_MR_VA_SET(c.in, va);
	RNIC_CMDI_REG_MR_LENGTH_SET(c.in, len);
	ret = cmd(fd, RNIC_CMD_REG_MR, &c);
	if (!ret && c.status)
		errno = c.status == RNIC_CMD_ST_NO_RESOURCES ? ENOMEM : EIO, ret = -1;
	*key = RNIC_CMDO_HANDLE_HANDLE_GET(c.out);
	return ret;
}

static uint32_t alloc_pd(int fd)
{
	struct rnic_uapi_cmd c = {0};

	expect("ALLOC_PD", cmd(fd, RNIC_CMD_ALLOC_PD, &c), 0);
	return RNIC_CMDO_HANDLE_HANDLE_GET(c.out);
}

/* another process with a context of its own: its third ring's handle, through the pipe */
static pid_t other_process(int *handle_pipe)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		exit(2);
	pid = fork();
	if (!pid) {
		int fd = open(DEV, O_RDWR);
		uint64_t h[3] = {0};

		for (int i = 0; fd >= 0 && i < 3; i++)
			alloc_ring(fd, 4096, &h[i]);
		if (write(p[1], &h[2], sizeof(h[2])) != sizeof(h[2]))
			exit(2);
		pause(); /* holds its file open until killed */
		exit(0);
	}
	close(p[1]);
	*handle_pipe = p[0];
	return pid;
}

static void rings(int fd)
{
	uint64_t h, theirs, bad;
	uint32_t cqn;
	int pfd;
	pid_t pid = other_process(&pfd);
	struct rnic_uapi_cmd c = {0};
	void *m;

	expect("ALLOC_RING of 0 bytes", alloc_ring(fd, 0, &bad), EINVAL);
	expect("ALLOC_RING of a size not in pages", alloc_ring(fd, 4097, &bad), EINVAL);
	expect("ALLOC_RING longer than a ring may be", alloc_ring(fd, 2 * STRIDE, &bad), EINVAL);
	expect("ALLOC_RING of a page", alloc_ring(fd, 4096, &h), 0);
	expect("CREATE_CQ on a ring never allocated", create_cq(fd, 7 * STRIDE, 6, &cqn), EINVAL);
	expect("CREATE_CQ on a ring too small for it", create_cq(fd, h, 10, &cqn), EINVAL);
	if (read(pfd, &theirs, sizeof(theirs)) != sizeof(theirs))
		exit(2);
	expect("CREATE_CQ on another process's ring", create_cq(fd, theirs, 6, &cqn), EINVAL);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)theirs);
	expect("mmap of another process's ring", m == MAP_FAILED ? -1 : 0, EINVAL);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, RNIC_UAPI_DB_OFFSET);
	expect("mmap of more than the doorbell page", m == MAP_FAILED ? -1 : 0, EINVAL);
	expect("CREATE_CQ on its ring", create_cq(fd, h, 6, &cqn), 0);
	expect("FREE_RING of a ring a CQ uses", ioctl(fd, RNIC_IOCTL_FREE_RING, &(uint64_t){h}), EBUSY);
	RNIC_CMDI_HANDLE_HANDLE_SET(c.in, cqn);
	expect("DESTROY_CQ", cmd(fd, RNIC_CMD_DESTROY_CQ, &c), 0);
	expect("FREE_RING once the CQ is gone", ioctl(fd, RNIC_IOCTL_FREE_RING, &(uint64_t){h}), 0);
	expect("FREE_RING again", ioctl(fd, RNIC_IOCTL_FREE_RING, &(uint64_t){h}), EINVAL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void commands(int fd)
{
	struct rnic_uapi_cmd c = {0};
	struct rnic_uapi_query q;
	uint32_t pdn, key;
	static char buf[8192];

	expect("QUERY", ioctl(fd, RNIC_IOCTL_QUERY, &q), 0);
	expect("QUERY into an unmapped address", ioctl(fd, RNIC_IOCTL_QUERY, (void *)8), EFAULT);
	expect("CMD from an unmapped address", ioctl(fd, RNIC_IOCTL_CMD, (void *)8), EFAULT);
	expect("an ioctl the driver does not have", ioctl(fd, _IO(RNIC_IOCTL_TYPE, 99)), ENOTTY);
	expect("CREATE_EQ (the driver's own command)", cmd(fd, RNIC_CMD_CREATE_EQ, &c), EINVAL);
	expect("an opcode that does not exist", cmd(fd, 0xff, &c), EINVAL);
	pdn = alloc_pd(fd);
	expect("REG_MR whose end wraps around", reg_mr(fd, pdn, ~0ull - 4095, 8192, &key), EINVAL);
	expect("REG_MR of no bytes", reg_mr(fd, pdn, (uintptr_t)buf, 0, &key), EINVAL);
	RNIC_CMDI_REG_MR_PAGELIST_SET(c.in, 0x1000);
	RNIC_CMDI_REG_MR_LENGTH_SET(c.in, 4096);
	expect("REG_MR naming its own page list", cmd(fd, RNIC_CMD_REG_MR, &c), EINVAL);
	expect("REG_MR of memory not mapped", reg_mr(fd, pdn, 0x100000000000ull, 8192, &key), EFAULT);
	expect("REG_MR of its own memory", reg_mr(fd, pdn, (uintptr_t)buf, sizeof(buf), &key), 0);
}

/* as user nobody, its RLIMIT_MEMLOCK 64 KiB: the node refused (udev has not opened it to all), or
 * opened and pinned memory held to the limit */
static void unprivileged(int opened)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		struct rlimit rl = {65536, 65536};
		void *big = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint32_t pdn, key;
		int fd;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) || setuid(65534))
			exit(2);
		fd = open(DEV, O_RDWR);
		if (!opened) {
			expect("open by another user (node 0600)", fd, EACCES);
			exit(fails ? 1 : 0);
		}
		expect("open by another user (node 0666: the udev rule)", fd < 0 ? -1 : 0, 0);
		pdn = alloc_pd(fd);
		memset(big, 1, 1 << 20);
		expect("REG_MR of 1 MiB over a 64 KiB RLIMIT_MEMLOCK", reg_mr(fd, pdn, (uintptr_t)big, 1 << 20, &key),
		       ENOMEM);
		expect("REG_MR of 32 KiB within it", reg_mr(fd, pdn, (uintptr_t)big, 32768, &key), 0);
		exit(fails ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	fails += !WIFEXITED(st) || WEXITSTATUS(st);
}

static void removed(int fd)
{
	struct rnic_uapi_query q;
	char dev[PATH_MAX], *name, c;
	uint32_t *db, *eq, *ring;
	int unbind, p[2], st;
	size_t eq_size;
	uint64_t h;
	pid_t pid;

	expect("QUERY", ioctl(fd, RNIC_IOCTL_QUERY, &q), 0);
	eq_size = ((RNIC_EQE_BYTES << q.eq_log) + 4095) & ~(size_t)4095;
	expect("ALLOC_RING of two pages", alloc_ring(fd, 8192, &h), 0);
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, RNIC_UAPI_DB_OFFSET);
	eq = mmap(NULL, eq_size, PROT_READ, MAP_SHARED, fd, RNIC_UAPI_EQ_OFFSET);
	ring = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)h);
	if (db == MAP_FAILED || eq == MAP_FAILED || ring == MAP_FAILED ||
	    !realpath("/sys/class/misc/rnic0/device", dev)) {
		printf("FAIL mappings and the card's sysfs node: %s\n", strerror(errno));
		fails++;
		return;
	}
	expect("mprotect of the ring's second page (a split)", mprotect(ring + 1024, 4096, PROT_READ), 0);
	expect_sigbus("event queue read", eq, 0, 0);
	expect_sigbus("ring written", ring, 1, 0);
	if (pipe(p))
		exit(2);
	pid = fork();
	if (!pid) { /* its copies of the mappings, in an mm of its own */
		fails = 0;
		if (read(p[0], &c, 1) != 1)
			exit(2);
		expect_sigbus("doorbell page written by a fork child after the card's removal", db, 1, 1);
		exit(fails ? 1 : 0);
	}
	name = strrchr(dev, '/') + 1;
	unbind = open("/sys/class/misc/rnic0/device/driver/unbind", O_WRONLY);
	expect("unbind of the card from rnic.ko", write(unbind, name, strlen(name)) < 0 ? -1 : 0, 0);
	close(unbind);
	expect_sigbus("doorbell page written after the card's removal", db, 1, 1);
	expect_sigbus("doorbell page read after the card's removal", db, 0, 1);
	expect_sigbus("event queue read after the card's removal", eq, 0, 1);
	expect_sigbus("ring read after the card's removal", ring, 0, 1);
	expect_sigbus("ring's second page read after the card's removal", ring + 1024, 0, 1);
	expect("mmap after the card's removal",
	       mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, RNIC_UAPI_DB_OFFSET) == MAP_FAILED ? -1 : 0, ENODEV);
	if (write(p[1], "x", 1) != 1)
		exit(2);
	waitpid(pid, &st, 0);
	fails += !WIFEXITED(st) || WEXITSTATUS(st);
	munmap(db, 4096);
	munmap(eq, eq_size);
	munmap(ring, 8192);
}

static void contexts(void)
{
	int n = 0, last, err;

	while ((last = open(DEV, O_RDWR)) >= 0)
		n++;
	err = errno;
	printf("%s contexts opened at once: %d of %u\n", n == RNIC_NUM_CTX - 1 ? "ok  " : "FAIL", n,
	       RNIC_NUM_CTX - 1);
	fails += n != RNIC_NUM_CTX - 1;
	errno = err;
	expect("one more", last, EBUSY);
}

int main(int argc, char **argv)
{
	int fd = open(DEV, O_RDWR);

	if (fd < 0) {
		perror(DEV);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "contexts")) {
		close(fd);
		fd = -1;
		contexts();
	} else if (argc > 1 && !strcmp(argv[1], "user")) {
		unprivileged(1);
	} else if (argc > 1 && !strcmp(argv[1], "removed")) {
		removed(fd);
	} else {
		commands(fd);
		rings(fd);
		unprivileged(0);
	}
	if (fd >= 0)
		close(fd);
	printf("%s: %d failed\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}
