/*
 * The pipe round trip of fairway's `workload=pipe` (and of `perf bench sched pipe`), run as
 * /init of a Linux initramfs under QEMU -icount, where guest nanoseconds are guest
 * instructions. It prints, per mode, the instructions of one round trip: the difference
 * between a run of 2N and a run of N round trips, over N (setup, thread creation and the
 * first touches cancel out), as `cargo xtask profile` does for fairway.
 *
 * Modes: two threads (perf bench's -T) and two processes (its default), on one CPU
 * (`same`: both pinned to CPU 0) and, when the machine has two CPUs, one on each (`cross`).
 * With debugfs, the runs repeat under NO_DELAY_DEQUEUE.
 *
 * Written for this measurement only (docs/experiments/linux/README.md).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static int to_b[2], to_a[2];
static long rounds;
static int cpu_b;

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void partner_loop(void)
{
	int m;
	pin(cpu_b);
	for (long i = 0; i < rounds; i++) {
		if (read(to_b[0], &m, sizeof(m)) != sizeof(m) || write(to_a[1], &m, sizeof(m)) != sizeof(m)) {
			perror("partner");
			exit(1);
		}
	}
}

static void *partner_thread(void *arg)
{
	(void)arg;
	partner_loop();
	return NULL;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Nanoseconds (instructions under -icount shift=0) for n round trips. */
static long long run(long n, int threads, int cpu_a, int cpu_b_)
{
	pthread_t th;
	pid_t pid = 0;
	int m = 0;
	rounds = n;
	cpu_b = cpu_b_;
	if (pipe(to_b) || pipe(to_a)) {
		perror("pipe");
		exit(1);
	}
	pin(cpu_a);
	if (threads) {
		pthread_create(&th, NULL, partner_thread, NULL);
	} else {
		pid = fork();
		if (pid == 0) {
			partner_loop();
			_exit(0);
		}
	}
	/* one round first (the partner's first of n): both are running and warm */
	write(to_b[1], &m, sizeof(m));
	read(to_a[0], &m, sizeof(m));
	long long t0 = now_ns();
	for (long i = 1; i < n; i++) {
		if (write(to_b[1], &m, sizeof(m)) != sizeof(m) || read(to_a[0], &m, sizeof(m)) != sizeof(m)) {
			perror("main");
			exit(1);
		}
	}
	long long t1 = now_ns();
	if (threads)
		pthread_join(th, NULL);
	else
		waitpid(pid, NULL, 0);
	close(to_b[0]); close(to_b[1]); close(to_a[0]); close(to_a[1]);
	return t1 - t0;
}

/* REPEATS pairs of runs (N and 2N round trips), each pair's difference over N printed. */
#define REPEATS 3

static void measure(const char *features, int threads, int cpu_a, int cpu_b_, long n)
{
	for (int r = 0; r < REPEATS; r++) {
		long long small = run(n, threads, cpu_a, cpu_b_);
		long long big = run(2 * n, threads, cpu_a, cpu_b_);
		printf("@linux pipe features=%s kind=%s mode=%s repeat=%d rounds=%ld ns_small=%lld ns_big=%lld "
		       "per_round_trip=%.1f\n",
		       features, threads ? "threads" : "processes", cpu_a == cpu_b_ ? "same" : "cross", r, n, small,
		       big, (double)(big - small) / (double)n);
		fflush(stdout);
	}
}

static void print_file(const char *label, const char *path)
{
	char buf[1024] = "";
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		buf[k > 0 ? k : 0] = 0;
		close(fd);
	}
	buf[strcspn(buf, "\n")] = 0;
	printf("@linux %s=%s\n", label, buf[0] ? buf : "?");
}

static int set_feature(const char *name)
{
	int fd = open("/sys/kernel/debug/sched/features", O_WRONLY);
	if (fd < 0)
		return -1;
	int ok = write(fd, name, strlen(name)) == (ssize_t)strlen(name);
	close(fd);
	return ok ? 0 : -1;
}

/* Lets what the boot left running (deferred initcalls, crypto self-tests: RSA's multi-precision
 * arithmetic showed up in early runs) finish before anything is measured: an idle second costs
 * nothing under -icount sleep=off, then one unmeasured run warms the path. */
static void settle(void)
{
	sleep(2);
	run(20000, 1, 0, 0);
}

int main(void)
{
	long n = 20000;
#ifdef PROFILE_ROUNDS
	/* `cargo xtask profile`-style: one run of PROFILE_ROUNDS round trips (threads, one CPU),
	 * then power off; two such boots (N and 2N) are subtracted per instruction address */
	mount("proc", "/proc", "proc", 0, NULL);
	settle();
	long long t = run(PROFILE_ROUNDS, 1, 0, 0);
	printf("@linux profile rounds=%d ns=%lld\n", PROFILE_ROUNDS, t);
	fflush(stdout);
	reboot(RB_POWER_OFF);
#endif
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	printf("@linux start cpus=%d\n", cpus);
	print_file("clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	print_file("features", "/sys/kernel/debug/sched/features");
	settle();
	fflush(stdout);
	for (int pass = 0; pass < 2; pass++) {
		const char *f = pass == 0 ? "default" : "NO_DELAY_DEQUEUE";
		if (pass == 1 && set_feature("NO_DELAY_DEQUEUE") != 0) {
			printf("@linux no_debugfs (NO_DELAY_DEQUEUE pass skipped)\n");
			break;
		}
		for (int threads = 1; threads >= 0; threads--) {
			measure(f, threads, 0, 0, n);
			if (cpus >= 2)
				measure(f, threads, 0, 1, n);
		}
	}
	printf("@linux done\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
