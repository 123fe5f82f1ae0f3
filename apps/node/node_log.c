/* The node's event log (node_log.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "apps/node/node_log.h"
#include "core/sha256.h"

static int log_fd = 2;

swin_status node_log_open(const char *path, swin_error *err)
{
    if (!strcmp(path, "-")) {
        log_fd = 2;
        return SWIN_OK;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return swin_error_set(err, SWIN_ERR_IO, "log %s: %s", path, strerror(errno));
    log_fd = fd;
    return SWIN_OK;
}

void node_log_close(void)
{
    if (log_fd > 2) close(log_fd);
    log_fd = 2;
}

void node_log_event(const char *event, const char *study, const char *fields, ...)
{
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "{\"time\": \"%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03dZ\", \"event\": \"%s\"", (int)(tv.tv_usec / 1000), event);
    if (study) n += snprintf(line + n, sizeof line - (size_t)n, ", \"study\": \"%s\"", study);
    if (fields && n < (int)sizeof line - 4) {
        n += snprintf(line + n, sizeof line - (size_t)n, ", ");
        va_list ap;
        va_start(ap, fields);
        int m = vsnprintf(line + n, sizeof line - (size_t)n, fields, ap);
        va_end(ap);
        n = m < 0 || n + m >= (int)sizeof line - 3 ? (int)sizeof line - 3 : n + m;
    }
    n += snprintf(line + n, sizeof line - (size_t)n, "}\n");
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
    for (ssize_t w; n > 0 && (w = write(log_fd, line, (size_t)n)) != n;)
        if (w >= 0 || errno != EINTR) break; /* a short write of a log line is not retried */
}

const char *node_log_str(const char *s, char *buf, size_t size)
{
    size_t i = 0;
    buf[i++] = '"';
    for (; *s && i + 8 < size; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') buf[i++] = '\\', buf[i++] = (char)ch;
        else if (ch < 0x20) i += (size_t)snprintf(buf + i, size - i, "\\u%04x", ch);
        else buf[i++] = (char)ch;
    }
    buf[i++] = '"';
    buf[i] = 0;
    return buf;
}

static int uid_char(char c)
{
    return (c >= '0' && c <= '9') || c == '.';
}

const char *node_log_scrub(const char *s, char *buf, size_t size)
{
    size_t o = 0;
    while (*s && o + 1 < size) {
        size_t run = 0, dots = 0;
        while (uid_char(s[run])) dots += s[run++] == '.';
        if (run >= 10 && dots >= 3) {
            char hex[65];
            swin_sha256_hex(s, run, hex);
            o += (size_t)snprintf(buf + o, size - o, "uid:%.12s", hex);
            if (o >= size) o = size - 1;
            s += run;
        } else if (run) {
            size_t take = run < size - 1 - o ? run : size - 1 - o;
            memcpy(buf + o, s, take);
            o += take, s += run;
        } else {
            buf[o++] = *s++;
        }
    }
    buf[o] = 0;
    return buf;
}
