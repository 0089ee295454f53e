// openloop: a constant-rate HTTP/1.1 load generator for the open-loop p99 (docs/benchmarks.md, issue 42).
// Built and run by bench/loadgen/generator.ts; bench only.
//
// Request i is due at start + i/rate whatever the server is doing. Its latency runs from that due time,
// not from the moment it was written to a socket, to the last byte of its response: a stalled server
// (or a late generator, or a request waiting for a free connection) counts against the latency instead
// of silently lowering the offered load. This is the coordinated-omission correction wrk2 makes.
//
// One thread, epoll, non-blocking sockets, HTTP/1.1 keep-alive over a pool of connections, one request
// in flight per connection (no pipelining: a client does not pipeline). A timerfd armed at the next due
// time wakes the loop, so the schedule keeps microsecond precision. Latencies go into log-bucketed
// histograms (HDR style: 256 sub-buckets per power of two, under 0.8 % error).
//
// The requests are read from a file of prepared raw HTTP requests, each framed as "<length>\n<bytes>",
// used in order (and round again if the run needs more than the file holds).
//
// Usage: openloop --host H --port P --rate R --duration S [--warmup S] [--connections N]
//                 [--timeout-ms T] --requests FILE [--series FILE]
// Prints one JSON line on stdout. --series writes "due_ms latency_us status" per measured request, for
// lining the slow ones up with the server's own record (GC, checkpoints, timers).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define SUB_BITS 8
#define SUB_COUNT (1 << SUB_BITS)
#define HALF_COUNT (SUB_COUNT / 2)
#define MAX_SHIFT 40
#define BUCKETS (SUB_COUNT + MAX_SHIFT * HALF_COUNT)
#define LATE_NS 2000000LL /* a send more than 2 ms after its due time is the generator's fault */

typedef struct {
  uint64_t counts[BUCKETS];
  uint64_t total;
  int64_t max;
} histogram;

static int bucket_of(int64_t v) {
  if (v < 0) v = 0;
  if (v < SUB_COUNT) return (int)v;
  int msb = 63 - __builtin_clzll((uint64_t)v);
  int shift = msb - (SUB_BITS - 1);
  if (shift > MAX_SHIFT) return BUCKETS - 1;
  return SUB_COUNT + (shift - 1) * HALF_COUNT + (int)((v >> shift) - HALF_COUNT);
}

/** The highest value that falls in bucket i (HDR's "highest equivalent value"). */
static int64_t bucket_top(int i) {
  if (i < SUB_COUNT) return i;
  int shift = (i - SUB_COUNT) / HALF_COUNT + 1;
  int64_t sub = (i - SUB_COUNT) % HALF_COUNT + HALF_COUNT;
  return ((sub + 1) << shift) - 1;
}

static void record(histogram *h, int64_t v) {
  h->counts[bucket_of(v)] += 1;
  h->total += 1;
  if (v > h->max) h->max = v;
}

static int64_t percentile(const histogram *h, double p) {
  if (h->total == 0) return 0;
  uint64_t rank = (uint64_t)((p / 100.0) * (double)h->total + 0.999999);
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < BUCKETS; i++) {
    seen += h->counts[i];
    if (seen >= rank) {
      int64_t top = bucket_top(i);
      return top < h->max ? top : h->max;
    }
  }
  return h->max;
}

typedef struct {
  const char *data;
  size_t len;
} request;

enum { IDLE, CONNECTING, BUSY, CLOSED };

typedef struct {
  int fd;
  int state;
  int64_t due;      /* the request in flight: its due time */
  int64_t sent_at;  /* and when it was written */
  int measured;
  const request *req;
  size_t written;
  char buf[65536];
  size_t have;
} conn;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct sockaddr_in target;
static int epfd;
static int timeout_ms = 10000;
static histogram corrected, uncorrected;
static uint64_t completed, non2xx, errors, late_sends, queued, sent_measured;
static int64_t max_lag;
static FILE *series;
static int64_t start;

static void die(const char *what) {
  perror(what);
  exit(2);
}

static void watch(conn *c, uint32_t events, int op) {
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(epfd, op, c->fd, &ev) < 0) die("epoll_ctl");
}

static void open_conn(conn *c) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) die("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->have = 0;
  if (connect(c->fd, (struct sockaddr *)&target, sizeof target) == 0) {
    c->state = IDLE;
    watch(c, EPOLLIN, EPOLL_CTL_ADD);
  } else if (errno == EINPROGRESS) {
    c->state = CONNECTING;
    watch(c, EPOLLOUT, EPOLL_CTL_ADD);
  } else
    die("connect");
}

static void close_conn(conn *c) {
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->state = CLOSED;
}

/** The request in flight failed (reset, closed, timed out, unparseable): an error, and a new connection. */
static void fail(conn *c) {
  if (c->state == BUSY && c->measured) {
    errors += 1;
    completed += 1;
  }
  close_conn(c);
  open_conn(c);
}

static void finish(conn *c, int status) {
  int64_t t = now_ns();
  if (c->measured) {
    completed += 1;
    if (status < 200 || status >= 300) non2xx += 1;
    int64_t latency = (t - c->due) / 1000;
    record(&corrected, latency);
    record(&uncorrected, (t - c->sent_at) / 1000);
    if (series) fprintf(series, "%.3f %lld %d\n", (double)(c->due - start) / 1e6, (long long)latency, status);
  }
  c->state = IDLE;
  c->req = NULL;
}

static void write_some(conn *c) {
  while (c->written < c->req->len) {
    ssize_t n = send(c->fd, c->req->data + c->written, c->req->len - c->written, MSG_NOSIGNAL);
    if (n > 0) {
      c->written += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
      return;
    }
    fail(c);
    return;
  }
  watch(c, EPOLLIN, EPOLL_CTL_MOD);
}

static void start_request(conn *c, const request *r, int64_t due, int measured) {
  c->state = BUSY;
  c->due = due;
  c->sent_at = now_ns();
  c->measured = measured;
  c->req = r;
  c->written = 0;
  write_some(c);
}

/**
 * Parses one complete response at the start of c->buf: its status and its length (headers and body,
 * Content-Length or chunked). 0 while incomplete, -1 when unparseable.
 */
static long parse_response(const conn *c, int *status) {
  const char *b = c->buf;
  size_t n = c->have;
  const char *end = memmem(b, n, "\r\n\r\n", 4);
  if (!end) return n >= sizeof c->buf ? -1 : 0;
  size_t head = (size_t)(end - b) + 4;
  if (n < 12 || strncmp(b, "HTTP/1.", 7) != 0) return -1;
  *status = atoi(b + 9);
  long length = -1;
  int chunked = 0;
  for (const char *line = memmem(b, head, "\r\n", 2) + 2; line < end; line = memmem(line, head, "\r\n", 2) + 2) {
    if (strncasecmp(line, "content-length:", 15) == 0) length = atol(line + 15);
    else if (strncasecmp(line, "transfer-encoding:", 18) == 0 && memmem(line, (size_t)(end - line), "chunked", 7))
      chunked = 1;
  }
  if (!chunked) {
    if (length < 0) length = 0;
    return head + (size_t)length <= n ? (long)(head + (size_t)length) : (head + (size_t)length > sizeof c->buf ? -1 : 0);
  }
  size_t at = head;
  for (;;) {
    const char *crlf = memmem(b + at, n - at, "\r\n", 2);
    if (!crlf) return 0;
    long size = strtol(b + at, NULL, 16);
    at = (size_t)(crlf - b) + 2 + (size_t)size + 2;
    if (at > n) return at > sizeof c->buf ? -1 : 0;
    if (size == 0) return (long)at;
  }
}

static void read_some(conn *c) {
  for (;;) {
    ssize_t n = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, 0);
    if (n > 0) {
      c->have += (size_t)n;
      if (c->state != BUSY) continue; /* bytes nobody asked for: dropped when the next request starts */
      int status = 0;
      long used = parse_response(c, &status);
      if (used < 0) {
        fail(c);
        return;
      }
      if (used > 0) {
        memmove(c->buf, c->buf + used, c->have - (size_t)used);
        c->have -= (size_t)used;
        finish(c, status);
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fail(c); /* closed by the server or reset */
    return;
  }
}

static request *load_requests(const char *path, size_t *count) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) die(path);
  struct stat st;
  if (fstat(fd, &st) < 0) die("fstat");
  char *data = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
    if (n <= 0) die("read");
    got += (size_t)n;
  }
  close(fd);
  size_t cap = 1024, k = 0;
  request *rs = malloc(cap * sizeof *rs);
  for (size_t at = 0; at < got;) {
    char *nl = memchr(data + at, '\n', got - at);
    if (!nl) break;
    size_t len = strtoul(data + at, NULL, 10);
    at = (size_t)(nl - data) + 1;
    if (at + len > got) break;
    if (k == cap) rs = realloc(rs, (cap *= 2) * sizeof *rs);
    rs[k++] = (request){data + at, len};
    at += len;
  }
  if (k == 0) {
    fprintf(stderr, "%s: no requests\n", path);
    exit(2);
  }
  *count = k;
  return rs;
}

static void print_ms(const char *name, int64_t us, int comma) {
  printf("\"%s\":%.2f%s", name, (double)us / 1000.0, comma ? "," : "");
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *requests_path = NULL, *series_path = NULL;
  int port = 0, connections = 32;
  double rate = 1000, duration = 10, warmup = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--host")) host = v;
    else if (!strcmp(k, "--port")) port = atoi(v);
    else if (!strcmp(k, "--rate")) rate = atof(v);
    else if (!strcmp(k, "--duration")) duration = atof(v);
    else if (!strcmp(k, "--warmup")) warmup = atof(v);
    else if (!strcmp(k, "--connections")) connections = atoi(v);
    else if (!strcmp(k, "--timeout-ms")) timeout_ms = atoi(v);
    else if (!strcmp(k, "--requests")) requests_path = v;
    else if (!strcmp(k, "--series")) series_path = v;
    else {
      fprintf(stderr, "unknown option %s\n", k);
      return 2;
    }
  }
  if (!port || !requests_path || rate <= 0 || connections < 1) {
    fprintf(stderr, "usage: openloop --port P --rate R --duration S --requests FILE [...]\n");
    return 2;
  }
  size_t nreq;
  request *reqs = load_requests(requests_path, &nreq);
  if (series_path && !(series = fopen(series_path, "w"))) die(series_path);
  target.sin_family = AF_INET;
  target.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &target.sin_addr) != 1) die("host");

  epfd = epoll_create1(EPOLL_CLOEXEC);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epfd < 0 || tfd < 0) die("epoll/timerfd");
  struct epoll_event tev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &tev);
  conn *conns = calloc((size_t)connections, sizeof *conns);
  for (int i = 0; i < connections; i++) open_conn(&conns[i]);

  const int64_t interval = (int64_t)(1e9 / rate);
  const uint64_t warm_n = (uint64_t)(warmup * rate), total_n = warm_n + (uint64_t)(duration * rate);
  uint64_t next = 0; /* the next request to send, in schedule order */
  start = now_ns() + 200000000LL; /* 200 ms for the connections to open */
  struct epoll_event events[256];
  int64_t drain_until = 0;
  int starving = 0;
  int rr = 0;
  for (;;) {
    int64_t t = now_ns();
    /* Everything that has fallen due goes out now, on a free connection; what finds none waits in order. */
    while (next < total_n && start + (int64_t)next * interval <= t) {
      /* Round robin, so that every connection stays in use and none idles into the server's keep-alive timeout. */
      conn *free_conn = NULL;
      for (int k = 0; k < connections && !free_conn; k++) {
        int i = (rr + k) % connections;
        if (conns[i].state == IDLE) {
          free_conn = &conns[i];
          rr = i + 1;
        }
      }
      int64_t due = start + (int64_t)next * interval;
      if (!free_conn) {
        starving = 1;
        break;
      }
      int measured = next >= warm_n;
      if (measured) {
        sent_measured += 1;
        int64_t lag = t - due;
        /* Late because every connection was busy (the server's stall: a backlog formed and is not yet drained) or
           because this loop was (its own). */
        if (starving) queued += 1;
        else {
          if (lag > max_lag) max_lag = lag;
          if (lag > LATE_NS) late_sends += 1;
        }
      }
      free_conn->have = 0;
      start_request(free_conn, &reqs[next % nreq], due, measured);
      next += 1;
    }
    int busy = 0;
    for (int i = 0; i < connections; i++) {
      conn *c = &conns[i];
      if (c->state != BUSY) continue;
      busy += 1;
      if ((t - c->sent_at) / 1000000 > timeout_ms) fail(c);
    }
    if (next >= total_n) {
      if (!drain_until) drain_until = t + (int64_t)timeout_ms * 1000000LL;
      if (busy == 0 || t > drain_until) break;
    }
    /* Sleep until the next due time (or at most 10 ms, for the timeouts); with every connection busy, until a
       response frees one. */
    if (next < total_n && start + (int64_t)next * interval > t) starving = 0; /* the backlog is drained */
    int64_t wake = next < total_n && !starving ? start + (int64_t)next * interval : t + 10000000LL;
    if (wake > t + 10000000LL) wake = t + 10000000LL;
    /* An absolute time already past fires at once. */
    struct itimerspec its = {{0, 0}, {wake / 1000000000LL, wake % 1000000000LL}};
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
    int n = epoll_wait(epfd, events, 256, -1);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int i = 0; i < n; i++) {
      conn *c = events[i].data.ptr;
      if (!c) {
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0) { /* nothing: spurious */
        }
        continue;
      }
      if (c->state == CLOSED) continue;
      if (c->state == CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
          fprintf(stderr, "connect: %s\n", strerror(err));
          exit(2);
        }
        c->state = IDLE;
        watch(c, EPOLLIN, EPOLL_CTL_MOD);
        continue;
      }
      if ((events[i].events & EPOLLOUT) && c->state == BUSY) write_some(c);
      if (c->state != CLOSED && (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) read_some(c);
    }
  }
  if (series) fclose(series);
  /* Requests sent and never answered within the drain are errors too. */
  errors += sent_measured - completed;
  /* start_ns: CLOCK_MONOTONIC, the clock of Node's process.hrtime, so the series lines up with the server's record. */
  printf("{\"start_ns\":%lld,\"offered_rps\":%.0f,\"rps\":%.0f,\"sent\":%llu,\"completed\":%llu,",
         (long long)start, rate, (double)completed / duration, (unsigned long long)sent_measured, (unsigned long long)completed);
  print_ms("p50", percentile(&corrected, 50), 1);
  print_ms("p90", percentile(&corrected, 90), 1);
  print_ms("p99", percentile(&corrected, 99), 1);
  print_ms("p999", percentile(&corrected, 99.9), 1);
  print_ms("max", corrected.max, 1);
  print_ms("uncorrected_p99", percentile(&uncorrected, 99), 1);
  print_ms("uncorrected_max", uncorrected.max, 1);
  print_ms("max_send_lag", max_lag / 1000, 1);
  printf("\"non2xx\":%llu,\"errors\":%llu,\"late_sends\":%llu,\"waited_for_connection\":%llu}\n",
         (unsigned long long)non2xx, (unsigned long long)errors, (unsigned long long)late_sends,
         (unsigned long long)queued);
  return 0;
}
