/*
 * A hackbench-shaped load (threads, pipes), written for comparing Linux with fairway's
 * `workload=hackbench` under QEMU -icount: GROUPS groups of FDS receivers and FDS senders;
 * each receiver owns a pipe; each sender writes LOOPS messages of DATASIZE bytes to every
 * receiver of its group; each receiver reads LOOPS * FDS messages. Printed per run: guest time
 * (instructions under -icount shift=0) and context switches (/proc/stat ctxt). Runs are
 * started at PHASES points of a tick (busy-waiting i/PHASES of it first), as fairway's
 * `bench --phases`; then again under NO_WAKEUP_PREEMPTION, then under NO_PLACE_LAG alone
 * (debugfs).
 *
 * Written for this measurement only (docs/experiments/linux/README.md).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

#define GROUPS 2
#define FDS 20
#define LOOPS 100
#define DATASIZE 100
#define PHASES 8
#define TICK_NS 4000000LL /* Debian's HZ=250 */

static int pipes[GROUPS][FDS][2];
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int ready, go;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void wait_start(void)
{
	pthread_mutex_lock(&start_lock);
	ready++;
	pthread_cond_broadcast(&start_cond);
	while (!go)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
}

static void *sender(void *arg)
{
	int g = (int)(long)arg / FDS;
	char buf[DATASIZE];
	memset(buf, 's', sizeof(buf));
	wait_start();
	for (int i = 0; i < LOOPS; i++)
		for (int j = 0; j < FDS; j++)
			for (size_t done = 0; done < sizeof(buf);) {
				ssize_t n = write(pipes[g][j][1], buf + done, sizeof(buf) - done);
				if (n <= 0) {
					perror("write");
					exit(1);
				}
				done += (size_t)n;
			}
	return NULL;
}

static void *receiver(void *arg)
{
	int g = (int)(long)arg / FDS, j = (int)(long)arg % FDS;
	char buf[DATASIZE];
	wait_start();
	for (long left = (long)LOOPS * FDS * DATASIZE; left > 0;) {
		ssize_t n = read(pipes[g][j][0], buf, left < DATASIZE ? (size_t)left : sizeof(buf));
		if (n <= 0) {
			perror("read");
			exit(1);
		}
		left -= n;
	}
	return NULL;
}

static long long ctxt(void)
{
	char buf[8192];
	int fd = open("/proc/stat", O_RDONLY);
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	char *p = strstr(buf, "\nctxt ");
	return p ? atoll(p + 6) : -1;
}

static void run(const char *features, int phase)
{
	pthread_t th[GROUPS * FDS * 2];
	int n = 0;
	for (int g = 0; g < GROUPS; g++)
		for (int j = 0; j < FDS; j++)
			if (pipe(pipes[g][j])) {
				perror("pipe");
				exit(1);
			}
	ready = go = 0;
	for (long i = 0; i < GROUPS * FDS; i++) {
		pthread_create(&th[n++], NULL, receiver, (void *)i);
		pthread_create(&th[n++], NULL, sender, (void *)i);
	}
	pthread_mutex_lock(&start_lock);
	while (ready < n)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
	/* the phase: busy for phase/PHASES of a tick, measured from a tick (a short sleep ends on one) */
	usleep(1);
	long long t = now_ns() + TICK_NS * phase / PHASES;
	while (now_ns() < t)
		;
	long long c0 = ctxt(), t0 = now_ns();
	pthread_mutex_lock(&start_lock);
	go = 1;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	long long t1 = now_ns(), c1 = ctxt();
	for (int g = 0; g < GROUPS; g++)
		for (int j = 0; j < FDS; j++) {
			close(pipes[g][j][0]);
			close(pipes[g][j][1]);
		}
	printf("@linux hackbench features=%s phase=%d/%d groups=%d fds=%d loops=%d datasize=%d time_s=%.3f switches=%lld\n",
	       features, phase, PHASES, GROUPS, FDS, LOOPS, DATASIZE, (t1 - t0) / 1e9, c1 - c0);
	fflush(stdout);
}

int main(void)
{
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	printf("@linux start cpus=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	sleep(2); /* let the boot's deferred work finish (free under -icount sleep=off) */
	run("warmup", 0);
	/* each pass's label, and the feature writes that set it up from the previous pass */
	static const struct {
		const char *label;
		const char *writes[2];
	} passes[] = {
		{"default", {NULL, NULL}},
		{"NO_WAKEUP_PREEMPTION", {"NO_WAKEUP_PREEMPTION", NULL}},
		{"NO_PLACE_LAG", {"WAKEUP_PREEMPTION", "NO_PLACE_LAG"}},
	};
	for (unsigned pass = 0; pass < sizeof passes / sizeof passes[0]; pass++) {
		const char *f = passes[pass].label;
		int ok = 1;
		for (int w = 0; w < 2 && passes[pass].writes[w]; w++) {
			const char *x = passes[pass].writes[w];
			int fd = open("/sys/kernel/debug/sched/features", O_WRONLY);
			ok = fd >= 0 && write(fd, x, strlen(x)) == (ssize_t)strlen(x);
			if (fd >= 0)
				close(fd);
			if (!ok)
				break;
		}
		if (!ok) {
			printf("@linux no_debugfs (%s pass skipped)\n", f);
			break;
		}
		for (int p = 0; p < PHASES; p++)
			run(f, p);
	}
	printf("@linux done\n");
	fflush(stdout);
	reboot(RB_POWER_OFF);
	return 0;
}
