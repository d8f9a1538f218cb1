/*
 * fairway's `workload=latency` on Linux, written for this comparison: on one CPU, HOGS threads
 * spin and a sleeper wakes every PERIOD_US; its latency is the time from the sleep's deadline
 * (an absolute clock_nanosleep) to running again. The sleeper's custom slice is set with
 * sched_setattr's sched_runtime (Linux 6.12: the request EEVDF places it with). For each slice
 * and each feature set it prints p50/p99/max and how many wakeups waited more than two of the
 * sleeper's slices, as fairway's `@fw latency` does. The base slice is set to fairway's 0.7 ms
 * through debugfs (Linux 6.12's default is 0.75 ms), and the sleeper's timer slack to 1 ns.
 *
 * Written for this measurement only (docs/experiments/linux/README.md).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOGS 2
#define PERIOD_US 3000
#define SAMPLES 1000
#define BASE_SLICE_NS 700000

struct sched_attr_v1 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static volatile int stop;
static long long lat[SAMPLES];
static long long slice_ns;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin0(void)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(0, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *hog(void *arg)
{
	(void)arg;
	pin0();
	while (!stop)
		;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pin0();
	/* Linux delays a normal task's timer by up to its timer slack (50 us by default) to
	 * batch expiries; fairway's timers have none, so the sleeper asks for the least */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (slice_ns) {
		struct sched_attr_v1 a = { .size = sizeof(a), .sched_policy = SCHED_OTHER, .sched_runtime = (uint64_t)slice_ns };
		if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
			perror("sched_setattr");
			exit(1);
		}
	}
	for (int i = 0; i < SAMPLES; i++) {
		long long d = now_ns() + PERIOD_US * 1000LL;
		struct timespec t = { d / 1000000000LL, d % 1000000000LL };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		lat[i] = now_ns() - d;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* nearest rank, as fairway's samples.rs: the smallest value with at least per_mille/1000 of
 * the samples at or below it */
static long long pct(int per_mille)
{
	int rank = (SAMPLES * per_mille + 999) / 1000;
	return lat[(rank < 1 ? 1 : rank) - 1];
}

static int write_debugfs(const char *file, const char *value)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/kernel/debug/sched/%s", file);
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	int ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -1;
}

static void run(const char *features, long long slice_us)
{
	pthread_t h[HOGS], s;
	stop = 0;
	slice_ns = slice_us * 1000;
	for (int i = 0; i < HOGS; i++)
		pthread_create(&h[i], NULL, hog, NULL);
	pthread_create(&s, NULL, sleeper, NULL);
	pthread_join(s, NULL);
	stop = 1;
	for (int i = 0; i < HOGS; i++)
		pthread_join(h[i], NULL);
	qsort(lat, SAMPLES, sizeof(lat[0]), cmp);
	long long sl = slice_ns ? slice_ns : BASE_SLICE_NS;
	int over = 0;
	for (int i = 0; i < SAMPLES; i++)
		over += lat[i] > 2 * sl;
	printf("@linux latency features=%s slice_us=%lld samples=%d p50_ns=%lld p99_ns=%lld max_ns=%lld over_2slice=%d\n",
	       features, slice_us, SAMPLES, pct(500), pct(990), lat[SAMPLES - 1], over);
	fflush(stdout);
}

int main(void)
{
	static const long long slices[] = { 0, 100, 300, 1000, 3000 };
	static const char *sets[][2] = { { "default", NULL }, { "NO_PREEMPT_SHORT", "PREEMPT_SHORT" },
					 { "NO_RUN_TO_PARITY", "RUN_TO_PARITY" } };
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	pin0();
	if (write_debugfs("base_slice_ns", "700000") != 0)
		printf("@linux no_debugfs (base slice stays Linux's)\n");
	sleep(2);
	for (int f = 0; f < 3; f++) {
		if (sets[f][1]) {
			write_debugfs("features", sets[f][1]); /* back to the default first */
			if (f > 0 && write_debugfs("features", sets[f][0]) != 0) {
				printf("@linux cannot set %s\n", sets[f][0]);
				continue;
			}
		}
		for (unsigned i = 0; i < sizeof(slices) / sizeof(slices[0]); i++)
			run(sets[f][0], slices[i]);
		if (sets[f][1])
			write_debugfs("features", sets[f][1]);
	}
	printf("@linux done\n");
	fflush(stdout);
	reboot(RB_POWER_OFF);
	return 0;
}
