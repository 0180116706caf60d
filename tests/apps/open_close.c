/* Open and close a device over and over, as short-lived verbs programs do: every
 * ibv_open_device must succeed on a context its previous owner left, whether that owner closed
 * it or died with it open.
 *
 *   open_close DEV ROUNDS [exit]
 *
 * exit: each round is a child process that opens the device, allocates a PD and dies without
 * closing anything. Prints "ROUNDS rounds, N failed" (and each failure's errno); exits non-zero
 * on a failure. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_once(struct ibv_device *dev, int die)
{
	struct ibv_context *c = ibv_open_device(dev);
	struct ibv_pd *pd;

	if (!c)
		return errno ? errno : EIO;
	pd = ibv_alloc_pd(c);
	if (!pd) {
		int e = errno;

		ibv_close_device(c);
		return e;
	}
	if (die)
		_exit(0);
	ibv_dealloc_pd(pd);
	return ibv_close_device(c);
}

int main(int argc, char **argv)
{
	struct ibv_device **l, *dev = NULL;
	int rounds, die, i, failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: open_close DEV ROUNDS [exit]\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	die = argc > 3 && !strcmp(argv[3], "exit");
	l = ibv_get_device_list(NULL);
	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), argv[1]))
			dev = l[i];
	if (!dev) {
		printf("no device %s\n", argv[1]);
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		int err = 0;

		if (die) {
			pid_t pid = fork();
			int st;

			if (pid < 0)
				return 1;
			if (!pid)
				_exit(open_once(dev, 1));
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
				err = EIO;
			else
				err = WEXITSTATUS(st);
		} else {
			err = open_once(dev, 0);
		}
		if (err) {
			failed++;
			printf("round %d: %s\n", i, strerror(err));
		}
	}
	ibv_free_device_list(l);
	printf("%d rounds, %d failed\n", rounds, failed);
	return failed != 0;
}
